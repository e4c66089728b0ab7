/**
 * The description of `GET /table/<table>/changes` (changes.ts, docs/changes.md): the change
 * feed of a table as server-sent events, with the read's `$select` and `$filter`, and the
 * stages it runs, whose errors are its error responses.
 */
import type { Stage } from '../errors.js';
import { MAX_FILTER_BYTES } from '../limits.js';
import type { TableOperation } from '../openapi/operation.js';
import { READ_MYSQL_STATUSES, READ_STAGES } from './read.openapi.js';

const FEED_STAGES: readonly Stage[] = [...READ_STAGES, 'feed'];

export const changesOperation: TableOperation = {
  action: 'read',
  method: 'get',
  path: '/changes',
  describe: (described, context) => ({
    tags: [described.names.tag],
    operationId: `changes_${described.names.id}`,
    summary: `Follow the changes of ${described.table.kind} ${described.table.name} (server-sent events)`,
    parameters: [
      {
        name: '$select',
        in: 'query',
        required: false,
        schema: { type: 'string' },
        description: "The columns of each event's `row`, comma-separated",
      },
      {
        name: '$filter',
        in: 'query',
        required: false,
        schema: { type: 'string', maxLength: MAX_FILTER_BYTES },
        description: "As a read's `$filter`, over the table's own columns (no paths or lambdas)",
      },
      {
        name: '$since',
        in: 'query',
        required: false,
        schema: { type: 'string' },
        description: 'Resume right after the event with this id (as the `Last-Event-ID` header)',
      },
    ],
    responses: {
      200: {
        description:
          'Events `insert`, `update`, `delete`, `truncate`, `schema` (and `overflow`, `expired`), each `data:` one JSON object `{"op","table","key","row","at","tx"}` (docs/changes.md)',
        content: { 'text/event-stream': { schema: { type: 'string' } } },
      },
      ...context.errors('changes', FEED_STAGES, READ_MYSQL_STATUSES),
    },
  }),
};
