/**
 * The description of `GET /` (root.ts): the index, and the stages it runs. In auth mode it needs
 * a token even under a policy that grants `anonymous` something.
 */
import type { Stage } from '../errors.js';
import { type JsonSchema, json, type RouteOperation } from '../openapi/operation.js';

export const INDEX_STAGES: readonly Stage[] = ['request'];

const INDEX_SCHEMA: JsonSchema = {
  type: 'object',
  required: ['name', 'version', 'links'],
  properties: {
    name: { const: 'tablegate' },
    version: { type: 'string' },
    links: {
      type: 'object',
      required: ['docs', 'openapi', 'health'],
      properties: {
        docs: { const: '/docs' },
        openapi: { const: '/openapi.json' },
        health: { const: '/health' },
      },
    },
  },
};

export const indexOperation: RouteOperation = {
  path: '/',
  method: 'get',
  signedIn: true,
  schemas: { Index: INDEX_SCHEMA },
  describe: (context) => ({
    tags: ['health'],
    operationId: 'index',
    summary: 'Name, version and where to go next',
    responses: {
      200: { description: 'The index', content: json(context.shared('Index')) },
      ...context.errors('index', INDEX_STAGES),
    },
  }),
};
