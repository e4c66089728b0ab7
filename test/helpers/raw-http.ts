/**
 * Plain node:http requests, one connection each, for tests that need what fetch does not give:
 * a chosen local address (another "client" on loopback: 127.0.0.2 …) and many requests at once.
 */
import http from 'node:http';

export interface RawAnswer {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: unknown;
}

export interface RawRequest {
  readonly method?: string;
  readonly headers?: Readonly<Record<string, string>>;
  /** Sent as JSON. */
  readonly json?: unknown;
  /** The client's address: 127.0.0.1 unless said (any 127.x.y.z reaches a loopback listener). */
  readonly localAddress?: string;
}

export function rawRequest(url: string, request: RawRequest = {}): Promise<RawAnswer> {
  const body = request.json === undefined ? undefined : JSON.stringify(request.json);
  return new Promise((resolve, reject) => {
    const outgoing = http.request(
      url,
      {
        method: request.method ?? (body === undefined ? 'GET' : 'POST'),
        agent: false,
        localAddress: request.localAddress,
        headers: {
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...request.headers,
        },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', reject);
        response.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown = text;
          try {
            parsed = JSON.parse(text);
          } catch {
            // Not JSON: the text itself.
          }
          resolve({ status: response.statusCode ?? 0, headers: response.headers, body: parsed });
        });
      },
    );
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

/** status → how many answers had it. */
export function countStatuses(answers: readonly { status: number }[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const { status } of answers) counts[status] = (counts[status] ?? 0) + 1;
  return counts;
}
