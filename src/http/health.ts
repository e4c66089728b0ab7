/**
 * `GET /live` (liveness): 200 whenever the process serves HTTP, asking MySQL nothing, so a
 * restart is never triggered by a database outage or a busy pool; no per-client cap counts it.
 * `GET /health` (readiness): 200 when MySQL answers a ping, 503 otherwise. Never needs a token. The ping
 * runs on the execute stage's control connection, so it neither waits behind a busy pool nor
 * reports a busy-but-alive server as down, and it answers within HEALTH_TIMEOUT_MS even when
 * MySQL hangs instead of refusing.
 */
import type { FastifyInstance } from 'fastify';
import type { Services } from '../services.js';

export function healthRoutes(app: FastifyInstance, { db }: Services): void {
  app.get('/live', async () => ({ status: 'ok' }));
  app.get('/health', async (_request, reply) =>
    (await db.ping(true)) ? { status: 'ok' } : reply.code(503).send({ status: 'unavailable' }),
  );
}
