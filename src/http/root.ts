/**
 * `GET /`: a small index for someone who opens the gateway's address — its name, version and
 * where to go next. It names no database and no table. In auth mode it needs a token like every
 * route that is not public (docs/auth.md, http/auth-guard.ts).
 */
import type { FastifyInstance } from 'fastify';
import { VERSION } from '../version.js';
import { gated } from './route-gate.js';

export const INDEX = {
  name: 'tablegate',
  version: VERSION,
  links: { docs: '/docs', openapi: '/openapi.json', health: '/health' },
} as const;

export function rootRoutes(app: FastifyInstance): void {
  app.get('/', gated({ kind: 'signed-in' }), async () => INDEX);
}
