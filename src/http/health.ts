/**
 * `GET /live` (liveness): 200 whenever the process serves HTTP, asking MySQL nothing, so a
 * restart is never triggered by a database outage or a busy pool; no per-client cap counts it.
 * `GET /health` (readiness): 200 when MySQL answers a ping, 503 otherwise. Never needs a token. The ping
 * runs on the execute stage's control connection, so it neither waits behind a busy pool nor
 * reports a busy-but-alive server as down, and it answers within HEALTH_TIMEOUT_MS even when
 * MySQL hangs instead of refusing. With `--shutdown-delay`, /health answers 503 `shutting down`
 * from SIGTERM until the gateway closes, while every other route is still served.
 */
import type { FastifyInstance } from 'fastify';
import type { Services } from '../services.js';
import { gated } from './route-gate.js';

export function healthRoutes(app: FastifyInstance, { db, shutdown }: Services): void {
  app.get('/live', gated({ kind: 'public' }), async () => ({ status: 'ok' }));
  app.get('/health', gated({ kind: 'public' }), async (_request, reply) => {
    if (shutdown?.draining) return reply.code(503).send({ status: 'shutting down' });
    return (await db.ping(true))
      ? { status: 'ok' }
      : reply.code(503).send({ status: 'unavailable' });
  });
  // While draining, every answer closes its connection: a load balancer or client that keeps
  // connections open finds the next request's connection on another gateway.
  if (shutdown)
    app.addHook('onRequest', (_request, reply, done) => {
      if (shutdown.draining) reply.header('connection', 'close');
      done();
    });
}
