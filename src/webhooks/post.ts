/**
 * One POST of a webhook's event, with node:http on a keep-alive connection of the webhook's own
 * (one at a time: a webhook delivers in order). Not `fetch`: its web streams and abort signals
 * cost several times the request itself, once per event. A redirect is an answer like any other
 * (not followed: the receiver's URL is what the webhooks file says). An attempt is bounded in
 * time (head and body) and in the bytes of the answer read.
 */
import http from 'node:http';
import https from 'node:https';
import { WEBHOOK_ANSWER_BYTES } from '../limits.js';

export interface Poster {
  /** Resolves with the answer's status; rejects when there is none (refused, timed out). */
  post(headers: Record<string, string>, body: string): Promise<number>;
  /** Cuts the attempt under way off at once (its post rejects with code ABORTED). */
  abort(): void;
  close(): void;
}

export function poster(url: string, timeoutMs: number, answerBytes = WEBHOOK_ANSWER_BYTES): Poster {
  const target = new URL(url);
  const secure = target.protocol === 'https:';
  const agent = new (secure ? https.Agent : http.Agent)({ keepAlive: true, maxSockets: 1 });
  const send = secure ? https.request : http.request;
  let current: http.ClientRequest | null = null;
  return {
    post: (headers, body) =>
      new Promise<number>((resolve, reject) => {
        // The answer's status, once its head came; 0 before.
        let status = 0;
        const settle = () => {
          clearTimeout(deadline);
          resolve(status);
        };
        // The whole attempt, head and body, within the timeout: an answer that trickles in
        // keeps a socket's idle timer from firing, so the limit is a clock of its own.
        const deadline = setTimeout(() => {
          if (status !== 0) {
            request.destroy();
            settle();
          } else request.destroy(Object.assign(new Error('no answer'), { code: 'TIMEOUT' }));
        }, timeoutMs);
        const request = send(
          target,
          {
            method: 'POST',
            agent,
            headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
          },
          (response) => {
            status = response.statusCode ?? 0;
            // The body is read only to keep the connection for the next event, and only so
            // far: a receiver that answers without end does not hold the webhook up or fill
            // memory; past the limit the connection is closed and the status is the answer.
            let bytes = 0;
            response.on('data', (chunk: Buffer) => {
              bytes += chunk.length;
              if (bytes > answerBytes) {
                response.destroy();
                settle();
              }
            });
            response.on('error', settle);
            response.on('aborted', settle);
            response.on('end', settle);
          },
        );
        request.on('error', (error) => {
          if (status !== 0) settle();
          else {
            clearTimeout(deadline);
            reject(error);
          }
        });
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
