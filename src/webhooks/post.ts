/**
 * One POST of a webhook's event, with node:http on a keep-alive connection of the webhook's own
 * (one at a time: a webhook delivers in order). Not `fetch`: its web streams and abort signals
 * cost several times the request itself, once per event. A redirect is an answer like any other
 * (not followed: the receiver's URL is what the webhooks file says).
 */
import http from 'node:http';
import https from 'node:https';

export interface Poster {
  /** Resolves with the answer's status; rejects when there is none (refused, timed out). */
  post(headers: Record<string, string>, body: string): Promise<number>;
  /** Cuts the attempt under way off at once (its post rejects with code ABORTED). */
  abort(): void;
  close(): void;
}

export function poster(url: string, timeoutMs: number): Poster {
  const target = new URL(url);
  const secure = target.protocol === 'https:';
  const agent = new (secure ? https.Agent : http.Agent)({ keepAlive: true, maxSockets: 1 });
  const send = secure ? https.request : http.request;
  let current: http.ClientRequest | null = null;
  return {
    post: (headers, body) =>
      new Promise<number>((resolve, reject) => {
        const request = send(
          target,
          {
            method: 'POST',
            agent,
            headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
            timeout: timeoutMs,
          },
          (response) => {
            response.on('error', reject);
            response.on('end', () => resolve(response.statusCode ?? 0));
            response.resume();
          },
        );
        request.on('timeout', () =>
          request.destroy(Object.assign(new Error('no answer'), { code: 'TIMEOUT' })),
        );
        request.on('error', reject);
        request.on('close', () => {
          if (current === request) current = null;
        });
        current = request;
        request.end(body);
      }),
    abort: () => current?.destroy(Object.assign(new Error('stopped'), { code: 'ABORTED' })),
    close: () => agent.destroy(),
  };
}
