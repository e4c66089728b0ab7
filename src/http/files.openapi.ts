/**
 * The description of `GET /@/<filename>` (files.ts): the stages it runs, whose errors are its
 * error responses, and the operation — the file's bytes, whole or a range.
 */
import type { Stage } from '../errors.js';
import { headerParameter, type RouteOperation } from '../openapi/operation.js';

export const DOWNLOAD_STAGES: readonly Stage[] = ['files', 'request', 'policy-action'];

const anyBytes = { '*/*': { schema: {} } };

export const downloadOperation: RouteOperation = {
  path: '/@/{filename}',
  method: 'get',
  files: 'download',
  describe: (context) => ({
    tags: ['files'],
    operationId: 'download',
    summary: 'An uploaded file',
    description:
      'With its content type, Content-Length, ETag and Range support. HTML, SVG, XML and script types come as attachments.',
    parameters: [
      {
        name: 'filename',
        in: 'path',
        required: true,
        schema: { type: 'string' },
        description: 'The `filename` of the file record',
      },
      headerParameter('Range'),
    ],
    responses: {
      200: { description: 'The file', content: anyBytes },
      206: { description: 'The requested range', content: anyBytes },
      ...context.errors('download', DOWNLOAD_STAGES),
    },
  }),
};
