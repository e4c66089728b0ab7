/**
 * `GET /health`: 200 when MySQL answers a ping, 503 otherwise. Never needs a token. The answer
 * comes within HEALTH_TIMEOUT_MS even when MySQL hangs instead of refusing (a frozen server, a
 * network that drops packets): a probe that gets no answer says "unavailable", it does not wait.
 */
import type { FastifyInstance } from 'fastify';
import type { Services } from '../services.js';

export const HEALTH_TIMEOUT_MS = 2000;

export function healthRoutes(app: FastifyInstance, { db }: Services): void {
  app.get('/health', async (_request, reply) => {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new Error('health check timed out')), HEALTH_TIMEOUT_MS);
    });
    try {
      await Promise.race([db.promise.query('SELECT 1'), timeout]);
      return { status: 'ok' };
    } catch {
      return reply.code(503).send({ status: 'unavailable' });
    } finally {
      clearTimeout(timer);
    }
  });
}
