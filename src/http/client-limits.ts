/**
 * Requests one client address may have in progress at once (`--max-client-requests`): past it a
 * request answers 429 TOO_MANY_CONCURRENT_REQUESTS at once, before any work. Off by default: the
 * pool is shared fairly between addresses without refusing anyone (execute/acquire.ts), and a cap
 * refuses a busy honest client with nobody else waiting (docs/operations.md); an
 * operator may still set one. The probes (`/health`, `/live`) are never counted or refused.
 */
import type { FastifyInstance } from 'fastify';
import { clientAddress } from '../auth/limits.js';
import { tooManyConcurrent } from '../errors.js';
import type { Loopback } from './loopback.js';

export const UNCOUNTED_ROUTES: ReadonlySet<string> = new Set(['/health', '/live']);

export function registerClientLimits(
  app: FastifyInstance,
  maxClientRequests: number,
  loopback: Loopback,
): void {
  if (maxClientRequests === 0) return;
  const inProgress = new Map<string, number>();
  // A callback hook, not an async one: it runs on every request.
  app.addHook('onRequest', (request, reply, done) => {
    if (UNCOUNTED_ROUTES.has(request.routeOptions.url ?? '')) return done();
    // A $batch's read over the loopback: its batch is counted, as its caller's request.
    if (loopback.open(request) !== null) return done();
    const client = clientAddress(request.ip);
    const count = inProgress.get(client) ?? 0;
    if (count >= maxClientRequests) return done(tooManyConcurrent());
    inProgress.set(client, count + 1);
    // 'close' comes once, whether the answer was sent in full or the connection went away
    // (so `on`, not `once`: no wrapper per request).
    reply.raw.on('close', () => {
      const left = (inProgress.get(client) ?? 1) - 1;
      if (left === 0) inProgress.delete(client);
      else inProgress.set(client, left);
    });
    done();
  });
}
