/** `GET /health`: 200 when MySQL answers a ping, 503 otherwise. Never needs a token. */
import type { FastifyInstance } from 'fastify';
import type { Services } from '../services.js';

export function healthRoutes(app: FastifyInstance, { db }: Services): void {
  app.get('/health', async (_request, reply) => {
    try {
      await db.promise.query('SELECT 1');
      return { status: 'ok' };
    } catch {
      return reply.code(503).send({ status: 'unavailable' });
    }
  });
}
