/**
 * The descriptions of `POST /table/<t>/create`, `PUT /table/<t>/update(<key>,<value>)` and
 * `update?$filter=…`, `DELETE /table/<t>/delete(<key>,<value>)` and `delete?$filter=…`
 * (write.ts): the stages each runs, whose errors are its error responses, and the operations —
 * bodies of the columns the caller may write, keys and filters among the columns it may read,
 * the `Prefer` header and `Preference-Applied`, and the success bodies (with `rows` under
 * `return=representation`).
 */
import type { Stage } from '../errors.js';
import { MAX_INSERT_ROWS } from '../limits.js';
import { SUCCESS_MESSAGES } from '../messages.js';
import { insertSchema, updateSchema } from '../openapi/column-schema.js';
import {
  type DescribedTable,
  type DescriptionContext,
  headerParameter,
  type JsonSchema,
  json,
  type TableOperation,
} from '../openapi/operation.js';
import { rowRef } from './read.openapi.js';

const WRITE_STAGES: readonly Stage[] = ['request', 'table', 'execute', 'write'];
export const CREATE_STAGES: readonly Stage[] = [
  'json-body',
  'values',
  'rows',
  'deep-insert',
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
  'prefer',
  'precondition',
];
export const DELETE_STAGES: readonly Stage[] = [
  'key',
  ...WRITE_STAGES,
  'policy-action',
  'prefer',
  'precondition',
];
/** By `$filter`: the filter's errors instead of the key's. */
const FILTER_UPDATE_STAGES: readonly Stage[] = [
  'read-options',
  ...UPDATE_STAGES.filter((stage) => stage !== 'key'),
];
const FILTER_DELETE_STAGES: readonly Stage[] = [
  'read-options',
  ...DELETE_STAGES.filter((stage) => stage !== 'key'),
];
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

const prefer = (description: string): JsonSchema =>
  headerParameter(
    'Prefer',
    `${description}; several are comma-separated, and any other is ignored (RFC 7240)`,
  );

const REPRESENTATION =
  '`return=representation` adds `rows`: the written rows as a read shows them (defaults, generated columns and new ids filled in; only what the caller may read)';
const MAX_AFFECTED =
  '`max-affected=<n>`: when more rows would change, none does and the answer is 400 `TOO_MANY_ROWS`';

const PREFER_CREATE = prefer(
  `${REPRESENTATION}; \`resolution=merge-duplicates\` updates the row a new row's primary or unique key meets with its columns instead (needs the update grant too), \`resolution=ignore-duplicates\` leaves that row as it is`,
);
const PREFER_UPDATE = prefer(`${REPRESENTATION}; ${MAX_AFFECTED}`);
const PREFER_DELETE = prefer(MAX_AFFECTED);

/** If-Match (docs/caching.md): the row's ETag from its key read. */
const IF_MATCH = headerParameter(
  'If-Match',
  "The ETag `read(<key>,<value>)` gave (JSON, same role), or several, or `*` (the row exists): the write goes on only while the row still has it, checked on the row locked in the write's transaction; else 412 `PRECONDITION_FAILED` and nothing changes. By `$filter`, always 412",
);

const APPLIED = {
  'Preference-Applied': {
    description: 'The preferences of `Prefer` that were honoured, as given',
    schema: { type: 'string' },
  },
};

/** The shared result body, with `rows` of the table's row schema under return=representation. */
function withRows(
  result: string,
  described: DescribedTable,
  context: DescriptionContext,
): JsonSchema {
  return {
    allOf: [
      context.shared(result),
      {
        type: 'object',
        properties: {
          rows: {
            type: 'array',
            items: rowRef(described, context),
            description: 'With `Prefer: return=representation`: the written rows, by primary key',
          },
        },
      },
    ],
  };
}

const FILTER: JsonSchema = {
  name: '$filter',
  in: 'query',
  required: true,
  schema: { type: 'string' },
  description:
    "The rows to change: a condition in the language of a read's `$filter`, on the table's own columns",
};

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
      parameters: [context.parameter('prefer-create', PREFER_CREATE)],
      requestBody: {
        required: true,
        content: json({
          oneOf: [row, { type: 'array', minItems: 1, maxItems: MAX_INSERT_ROWS, items: row }],
        }),
      },
      responses: {
        200: {
          description: 'Inserted',
          headers: APPLIED,
          content: json(withRows('InsertResult', described, context)),
        },
        ...context.errors('create', CREATE_STAGES, WRITE_MYSQL_STATUSES),
      },
    };
  },
};

/** How an update or a delete names its rows: by `(<key>,<value>)` in the path, or by `$filter`. */
interface RowsChosen {
  path: string;
  /** After the action, in the operationId (`_filter`) and in the errors' key (`-filter`). */
  idSuffix: string;
  errorsSuffix: string;
  summary: (verb: string, described: DescribedTable) => string;
  note: string;
  parameters: (described: DescribedTable, context: DescriptionContext) => JsonSchema[];
}

const BY_KEY: RowsChosen = {
  path: '({key},{value})',
  idSuffix: '',
  errorsSuffix: '',
  summary: (verb, described) => `${verb} rows of ${what(described)} where key = value`,
  note: 'No matching row is not an error: `affectedRows` is 0.',
  parameters: keyParameters,
};

const BY_FILTER: RowsChosen = {
  path: '',
  idSuffix: '_filter',
  errorsSuffix: '-filter',
  summary: (verb, described) => `${verb} every row of ${what(described)} that $filter matches`,
  note: 'For a composite key or many rows at once; `$filter=true eq true` for every row.',
  parameters: (_described, context) => [context.parameter('write-filter', FILTER)],
};

function updateBy(rows: RowsChosen, stages: readonly Stage[], note = ''): TableOperation {
  return {
    action: 'update',
    method: 'put',
    schemas: { UpdateResult: UPDATE_RESULT },
    path: `/update${rows.path}`,
    describe: (described, context) => {
      const { view, names } = described;
      return {
        tags: [names.tag],
        operationId: `update${rows.idSuffix}_${names.id}`,
        summary: rows.summary('Update', described),
        description: `${rows.note}${note}${viewNote(described)}`,
        parameters: [
          ...rows.parameters(described, context),
          context.parameter('prefer-update', PREFER_UPDATE),
          context.parameter('if-match', IF_MATCH),
        ],
        requestBody: {
          required: true,
          content: json(context.schema(names.update, () => updateSchema(view.update ?? []))),
        },
        responses: {
          200: {
            description: 'Updated',
            headers: APPLIED,
            content: json(withRows('UpdateResult', described, context)),
          },
          ...context.errors(`update${rows.errorsSuffix}`, stages, WRITE_MYSQL_STATUSES),
        },
      };
    },
  };
}

function deleteBy(rows: RowsChosen, stages: readonly Stage[]): TableOperation {
  return {
    action: 'delete',
    method: 'delete',
    schemas: { DeleteResult: DELETE_RESULT },
    path: `/delete${rows.path}`,
    describe: (described, context) => ({
      tags: [described.names.tag],
      operationId: `delete${rows.idSuffix}_${described.names.id}`,
      summary: rows.summary('Delete', described),
      description: `${rows.note}${viewNote(described)}`,
      parameters: [
        ...rows.parameters(described, context),
        context.parameter('prefer-delete', PREFER_DELETE),
        context.parameter('if-match', IF_MATCH),
      ],
      responses: {
        200: {
          description: 'Deleted',
          headers: APPLIED,
          content: json(context.shared('DeleteResult')),
        },
        ...context.errors(`delete${rows.errorsSuffix}`, stages, WRITE_MYSQL_STATUSES),
      },
    }),
  };
}

export const updateOperation = updateBy(BY_KEY, UPDATE_STAGES);
export const filterUpdateOperation = updateBy(
  BY_FILTER,
  FILTER_UPDATE_STAGES,
  ' `affectedRows` counts the rows matched.',
);
export const deleteOperation = deleteBy(BY_KEY, DELETE_STAGES);
export const filterDeleteOperation = deleteBy(BY_FILTER, FILTER_DELETE_STAGES);
