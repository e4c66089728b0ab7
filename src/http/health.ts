/**
 * `GET /health`: 200 when MySQL answers a ping, 503 otherwise. Never needs a token. The ping
 * runs on the execute stage's control connection, so it neither waits behind a busy pool nor
 * reports a busy-but-alive server as down, and it answers within HEALTH_TIMEOUT_MS even when
 * MySQL hangs instead of refusing.
 */
import type { FastifyInstance } from 'fastify';
import type { Services } from '../services.js';

export function healthRoutes(app: FastifyInstance, { db }: Services): void {
  app.get('/health', async (_request, reply) =>
    (await db.ping()) ? { status: 'ok' } : reply.code(503).send({ status: 'unavailable' }),
  );
}
