/**
 * Hand-built multipart/form-data bodies and raw HTTP requests, for what fetch/FormData will not
 * do: a chosen field name or header, raw UTF-8 or RFC 5987 file names, a declared transfer
 * encoding, a malformed body, an exact request path, or a client that goes away mid-body.
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';

export interface RawPart {
  readonly name: string;
  /** Omitted: a text field. Written into the header as raw UTF-8 bytes, as browsers do. */
  readonly filename?: string;
  readonly contentType?: string;
  /** Extra header lines, e.g. `Content-Transfer-Encoding: binary`. */
  readonly headers?: readonly string[];
  /** Replaces the whole Content-Disposition value (for `filename*=UTF-8''…`). */
  readonly disposition?: string;
  readonly body: Buffer | string;
}

export interface MultipartBody {
  readonly contentType: string;
  readonly body: Buffer;
  readonly boundary: string;
}

export function partHead(part: RawPart, boundary: string): Buffer {
  const disposition =
    part.disposition ??
    `form-data; name="${part.name}"${part.filename === undefined ? '' : `; filename="${part.filename}"`}`;
  const lines = [`--${boundary}`, `Content-Disposition: ${disposition}`];
  if (part.contentType !== undefined) lines.push(`Content-Type: ${part.contentType}`);
  lines.push(...(part.headers ?? []));
  return Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'utf8');
}

export function multipartBody(
  parts: readonly RawPart[],
  boundary = `tg${randomBytes(12).toString('hex')}`,
): MultipartBody {
  const chunks: Buffer[] = [];
  for (const part of parts) {
    chunks.push(partHead(part, boundary), Buffer.from(part.body), Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return {
    contentType: `multipart/form-data; boundary=${boundary}`,
    body: Buffer.concat(chunks),
    boundary,
  };
}

export interface RawResponse {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: Buffer;
  json(): unknown;
}

/** One request with the path sent exactly as given (no URL normalisation, unlike fetch). */
export function rawRequest(
  baseUrl: string,
  options: {
    method?: string;
    path: string;
    headers?: Record<string, string | number>;
    body?: Buffer | string;
  },
): Promise<RawResponse> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const request = http.request(
      {
        host: hostname,
        port,
        method: options.method ?? 'GET',
        path: options.path,
        headers: options.headers,
        agent: false,
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', reject);
        response.on('end', () => {
          const body = Buffer.concat(chunks);
          resolve({
            status: response.statusCode ?? 0,
            headers: response.headers,
            body,
            json: () => JSON.parse(body.toString('utf8')),
          });
        });
      },
    );
    request.on('error', reject);
    request.end(options.body);
  });
}

/** Posts a hand-built body to `/upload` (or `path`). */
export function postMultipart(
  baseUrl: string,
  parts: readonly RawPart[],
  headers: Record<string, string> = {},
  path = '/upload',
): Promise<RawResponse> {
  const { contentType, body } = multipartBody(parts);
  return rawRequest(baseUrl, {
    method: 'POST',
    path,
    headers: { 'content-type': contentType, 'content-length': body.length, ...headers },
    body,
  });
}

/**
 * Starts an upload that promises `declaredLength` bytes, sends `sent` (the start of a body using
 * `boundary`), waits until the server has had time to store some of it, then destroys the socket.
 */
export async function abortedUpload(
  baseUrl: string,
  boundary: string,
  sent: Buffer,
  declaredLength: number,
  waitMs = 300,
): Promise<void> {
  const { hostname, port } = new URL(baseUrl);
  const request = http.request({
    host: hostname,
    port,
    method: 'POST',
    path: '/upload',
    agent: false,
    headers: {
      'content-type': `multipart/form-data; boundary=${boundary}`,
      'content-length': declaredLength,
    },
  });
  request.on('error', () => {});
  request.write(sent);
  await new Promise((resolve) => setTimeout(resolve, waitMs));
  request.destroy();
}
