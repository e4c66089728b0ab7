/**
 * The descriptions of `POST /table/<t>/create`, `PUT /table/<t>/update(<key>,<value>)` and
 * `DELETE /table/<t>/delete(<key>,<value>)` (write.ts): the stages each runs, whose errors are
 * its error responses, and the operations — bodies of the columns the caller may write, keys
 * among the columns it may read, and the success bodies.
 */
import type { Stage } from '../errors.js';
import { MAX_INSERT_ROWS } from '../limits.js';
import { SUCCESS_MESSAGES } from '../messages.js';
import { insertSchema, updateSchema } from '../openapi/column-schema.js';
import {
  type DescribedTable,
  type DescriptionContext,
  type JsonSchema,
  json,
  type TableOperation,
} from '../openapi/operation.js';

const WRITE_STAGES: readonly Stage[] = ['request', 'table', 'execute', 'write'];
export const CREATE_STAGES: readonly Stage[] = [
  'json-body',
  'values',
  'rows',
  ...WRITE_STAGES,
  'policy-action',
  'policy-rows',
];
export const UPDATE_STAGES: readonly Stage[] = [
  'key',
  'json-body',
  'values',
  ...WRITE_STAGES,
  'policy-action',
  'policy-rows',
];
export const DELETE_STAGES: readonly Stage[] = ['key', ...WRITE_STAGES, 'policy-action'];
/** MySQL's refusals of a write, under their own error names: reads' and conflicts. */
export const WRITE_MYSQL_STATUSES: readonly number[] = [400, 403, 404, 409];

const affectedRows = { type: 'integer', minimum: 0 };

const INSERT_RESULT: JsonSchema = {
  type: 'object',
  required: ['success', 'message', 'insertId', 'affectedRows'],
  properties: {
    success: { const: true },
    message: { const: SUCCESS_MESSAGES.inserted },
    insertId: {
      type: ['integer', 'string', 'null'],
      description:
        'The first AUTO_INCREMENT id, a string beyond 2^53; null when the table has none',
    },
    affectedRows,
  },
};

const UPDATE_RESULT: JsonSchema = {
  type: 'object',
  required: ['success', 'message', 'affectedRows'],
  properties: {
    success: { const: true },
    message: { const: SUCCESS_MESSAGES.updated },
    affectedRows: { ...affectedRows, description: 'Rows the key matched' },
  },
};

const DELETE_RESULT: JsonSchema = {
  type: 'object',
  required: ['success', 'message', 'affectedRows'],
  properties: {
    success: { const: true },
    message: { const: SUCCESS_MESSAGES.deleted },
    affectedRows,
  },
};

const KEY_VALUE: JsonSchema = {
  name: 'value',
  in: 'path',
  required: true,
  schema: { type: 'string' },
  description:
    "The value rows must have in that column: a bare token (`5`, `null`) or a single-quoted string (`'O''Brien, Jo'`)",
};

/** `key` among the columns the caller may read (the primary key first), then `value`. */
function keyParameters({ table, view }: DescribedTable, context: DescriptionContext): JsonSchema[] {
  const readable = view.read.map((c) => c.name);
  const keys = [
    ...table.primaryKey.filter((name) => readable.includes(name)),
    ...readable.filter((name) => !table.primaryKey.includes(name)),
  ];
  return [
    {
      name: 'key',
      in: 'path',
      required: true,
      schema: { type: 'string', enum: keys },
      description: 'The column that selects the rows',
    },
    context.parameter('key-value', KEY_VALUE),
  ];
}

const what = ({ table }: DescribedTable) => `${table.kind} ${table.name}`;

const viewNote = ({ table }: DescribedTable) =>
  table.kind === 'view'
    ? ' MySQL inserts only through views whose columns are plain columns of one table; a view it cannot write at all is offered no writes here.'
    : '';

export const createOperation: TableOperation = {
  action: 'create',
  method: 'post',
  schemas: { InsertResult: INSERT_RESULT },
  path: '/create',
  describe: (described, context) => {
    const { view, names } = described;
    const row = context.schema(names.insert, () => insertSchema(view.create ?? []));
    return {
      tags: [names.tag],
      operationId: `create_${names.id}`,
      summary: `Insert rows into ${what(described)}`,
      description: `One row, or an array of rows inserted in one transaction (all or none).${viewNote(described)}`,
      requestBody: {
        required: true,
        content: json({
          oneOf: [row, { type: 'array', minItems: 1, maxItems: MAX_INSERT_ROWS, items: row }],
        }),
      },
      responses: {
        200: { description: 'Inserted', content: json(context.shared('InsertResult')) },
        ...context.errors('create', CREATE_STAGES, WRITE_MYSQL_STATUSES),
      },
    };
  },
};

export const updateOperation: TableOperation = {
  action: 'update',
  method: 'put',
  schemas: { UpdateResult: UPDATE_RESULT },
  path: '/update({key},{value})',
  describe: (described, context) => {
    const { view, names } = described;
    return {
      tags: [names.tag],
      operationId: `update_${names.id}`,
      summary: `Update rows of ${what(described)} where key = value`,
      description: `No matching row is not an error: \`affectedRows\` is 0.${viewNote(described)}`,
      parameters: keyParameters(described, context),
      requestBody: {
        required: true,
        content: json(context.schema(names.update, () => updateSchema(view.update ?? []))),
      },
      responses: {
        200: { description: 'Updated', content: json(context.shared('UpdateResult')) },
        ...context.errors('update', UPDATE_STAGES, WRITE_MYSQL_STATUSES),
      },
    };
  },
};

export const deleteOperation: TableOperation = {
  action: 'delete',
  method: 'delete',
  schemas: { DeleteResult: DELETE_RESULT },
  path: '/delete({key},{value})',
  describe: (described, context) => ({
    tags: [described.names.tag],
    operationId: `delete_${described.names.id}`,
    summary: `Delete rows of ${what(described)} where key = value`,
    description: `No matching row is not an error: \`affectedRows\` is 0.${viewNote(described)}`,
    parameters: keyParameters(described, context),
    responses: {
      200: { description: 'Deleted', content: json(context.shared('DeleteResult')) },
      ...context.errors('delete', DELETE_STAGES, WRITE_MYSQL_STATUSES),
    },
  }),
};
