/** The description of `GET /openapi.json` (docs.ts): this description, and the stages it runs. */
import type { Stage } from '../errors.js';
import { json, type RouteOperation } from '../openapi/operation.js';

export const DESCRIPTION_STAGES: readonly Stage[] = ['request'];

export const descriptionOperation: RouteOperation = {
  path: '/openapi.json',
  method: 'get',
  describe: (context) => ({
    tags: ['health'],
    operationId: 'openapi',
    summary: 'This description',
    description:
      'Compressed as Accept-Encoding allows (br, gzip), with an ETag: send it back in If-None-Match and an unchanged description answers 304.',
    responses: {
      200: { description: 'OpenAPI 3.1', content: json({ type: 'object' }) },
      304: { description: 'Not modified: the ETag sent in If-None-Match is still current' },
      ...context.errors('openapi', DESCRIPTION_STAGES),
    },
  }),
};
