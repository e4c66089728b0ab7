/**
 * The description of `POST /upload` (upload.ts): the stages it runs, whose errors are its error
 * responses, and the operation — multipart parts named `files`, one file record per file.
 */
import type { Stage } from '../errors.js';
import { type JsonSchema, json, type RouteOperation } from '../openapi/operation.js';

export const UPLOAD_STAGES: readonly Stage[] = ['upload', 'request', 'policy-action'];

const FILE_RECORD: JsonSchema = {
  type: 'object',
  required: [
    'fieldname',
    'originalname',
    'encoding',
    'mimetype',
    'destination',
    'filename',
    'path',
    'size',
    'accessURL',
  ],
  properties: {
    fieldname: { const: 'files' },
    originalname: { type: 'string', description: 'The name as sent' },
    encoding: { type: 'string', examples: ['7bit'] },
    mimetype: { type: 'string', description: 'The type as sent' },
    destination: { type: 'string', description: 'The uploads directory (absolute)' },
    filename: {
      type: 'string',
      description: 'The stored name: new, unguessable, same extension',
    },
    path: { type: 'string', description: 'The stored file (absolute)' },
    size: { type: 'integer', minimum: 0, description: 'Bytes' },
    accessURL: { type: 'string', description: '`<base>/@/<filename>`' },
  },
};

const mib = (bytes: number) => `${Math.round((bytes / 1024 / 1024) * 100) / 100} MiB`;

export const uploadOperation: RouteOperation = {
  path: '/upload',
  method: 'post',
  schemas: { FileRecord: FILE_RECORD },
  files: 'upload',
  describe: (context) => {
    const { maxFiles, maxFileSize } = context.config;
    return {
      tags: ['files'],
      operationId: 'upload',
      summary: 'Upload files',
      description: `One or more parts named \`files\`: at most ${maxFiles} files of ${mib(maxFileSize)} each. Each is stored under a new name that keeps its extension.`,
      requestBody: {
        required: true,
        content: {
          'multipart/form-data': {
            schema: {
              type: 'object',
              required: ['files'],
              properties: {
                files: {
                  type: 'array',
                  minItems: 1,
                  maxItems: maxFiles,
                  items: {
                    type: 'string',
                    format: 'binary',
                    contentMediaType: 'application/octet-stream',
                  },
                },
              },
            },
          },
        },
      },
      responses: {
        200: {
          description: 'Stored',
          content: json({
            type: 'object',
            required: ['success', 'data'],
            properties: {
              success: { const: true },
              data: { type: 'array', items: context.shared('FileRecord') },
            },
          }),
        },
        ...context.errors('upload', UPLOAD_STAGES),
      },
    };
  },
};
