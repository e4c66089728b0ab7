/**
 * The descriptions of `GET /live` and `GET /health` (health.ts): public, and answered by the
 * routes themselves, never with the error body.
 */
import { type JsonSchema, json, type RouteOperation } from '../openapi/operation.js';

const HEALTH: JsonSchema = {
  type: 'object',
  required: ['status'],
  properties: { status: { enum: ['ok', 'unavailable', 'shutting down'] } },
};

export const liveOperation: RouteOperation = {
  path: '/live',
  method: 'get',
  schemas: { Health: HEALTH },
  public: true,
  describe: (context) => ({
    tags: ['health'],
    operationId: 'live',
    summary: 'Does the process serve? (liveness: asks MySQL nothing)',
    ...(context.auth ? { security: [] } : {}),
    responses: {
      200: { description: 'The process serves HTTP', content: json(context.shared('Health')) },
    },
  }),
};

export const healthOperation: RouteOperation = {
  path: '/health',
  method: 'get',
  schemas: { Health: HEALTH },
  public: true,
  describe: (context) => {
    const health = context.shared('Health');
    return {
      tags: ['health'],
      operationId: 'health',
      summary: 'Does MySQL answer? (readiness)',
      ...(context.auth ? { security: [] } : {}),
      responses: {
        200: { description: 'MySQL answers', content: json(health) },
        503: {
          description: 'MySQL does not answer, or the gateway is shutting down',
          content: json(health),
        },
      },
    };
  },
};
