/**
 * The descriptions of `GET /table/<table>/read` and `GET /table/<table>/read(<key>,<value>)`
 * (read.ts): the stages each runs, whose errors are its error responses, and the operations —
 * the `$…` options, `$select` naming only the columns the caller may read and `$apply` the
 * columns its aggregates may take, rows of the row schema of those columns, as JSON or CSV
 * (Accept).
 */
import type { Stage } from '../errors.js';
import { MAX_APPLY_BYTES, MAX_FILTER_BYTES } from '../limits.js';
import { rowSchema } from '../openapi/column-schema.js';
import { filterHelp } from '../openapi/filter-help.js';
import {
  type DescribedTable,
  type DescriptionContext,
  type JsonSchema,
  json,
  type TableOperation,
} from '../openapi/operation.js';
import { aggregatable } from '../plan/apply-types.js';
import { isSingleColumnKey } from '../plan/unique-keys.js';

/** A table the role may not read answers 404 (UNKNOWN_TABLE): reads are never FORBIDDEN. */
export const READ_STAGES: readonly Stage[] = ['read-options', 'request', 'table', 'execute'];
export const KEY_READ_STAGES: readonly Stage[] = [...READ_STAGES, 'key', 'row'];
/** MySQL's refusals of a read, under their own error names. */
export const READ_MYSQL_STATUSES: readonly number[] = [400, 403, 404];

const query = (name: string, schema: JsonSchema, description: string): JsonSchema => ({
  name,
  in: 'query',
  required: false,
  schema,
  description,
});

/** The options every read shares (one component each), in the order the UI lists them. */
const SHARED_OPTIONS: readonly [string, JsonSchema][] = [
  ['filter', query('$filter', { type: 'string', maxLength: MAX_FILTER_BYTES }, filterHelp())],
  [
    'orderby',
    query(
      '$orderby',
      { type: 'string' },
      '`col`, `col asc` or `col desc`, comma-separated; give one for stable pages',
    ),
  ],
  ['top', query('$top', { type: 'integer', minimum: 0 }, 'At most this many rows')],
  [
    'skip',
    query(
      '$skip',
      { type: 'integer', minimum: 0 },
      'Skip this many rows first (page N of size S: `$top=S&$skip=(N-1)*S`)',
    ),
  ],
  [
    'count',
    query(
      '$count',
      { type: 'boolean' },
      '`true` adds the header `X-Total-Count`: the rows the filter matches, ignoring $top and $skip',
    ),
  ],
];

/**
 * `$apply`'s grammar, once per document (a shared schema); each table's parameter then says only
 * which of the columns the caller may read each aggregate takes (plan/apply-types.ts), so an
 * agent or a form can offer just those.
 */
const APPLY_SCHEMA: JsonSchema = {
  type: 'string',
  maxLength: MAX_APPLY_BYTES,
  description: [
    'Totals instead of rows: `filter(…)` and `compute(year(col) as name)` steps, then',
    '`groupby((col, relation/col), aggregate(col with sum as total, $count as n))` or',
    '`aggregate(…)` alone (methods: sum, average, min, max, countdistinct). The answer: one',
    'object per group, its groupby values (a path as nested objects), then the aliases;',
    '$orderby, $top, $skip and $count apply to the groups. Not with $select or $expand.',
  ].join(' '),
};

function applyParameter({ view }: DescribedTable, context: DescriptionContext): JsonSchema {
  const { summable, ordered } = aggregatable(view.read);
  const list = (columns: readonly { name: string }[]) =>
    columns.length === 0 ? 'none' : columns.map((c) => c.name).join(', ');
  return query(
    '$apply',
    context.shared('Apply'),
    `Totals (grammar: the Apply schema). Group by and countdistinct: the columns of $select or a path through to-one relations; sum and average: ${list(summable)}; min and max: ${list(ordered)}.`,
  );
}

function readParameters(described: DescribedTable, context: DescriptionContext): JsonSchema[] {
  const names = described.view.read.map((c) => c.name).join(', ');
  return [
    query(
      '$select',
      { type: 'string' },
      `Columns to return, comma-separated (default \`*\`): ${names}`,
    ),
    ...SHARED_OPTIONS.map(([name, parameter]) => context.parameter(name, parameter)),
    applyParameter(described, context),
  ];
}

/** The row schema of the columns the caller may read (one component per table). */
export function rowRef({ table, view, names }: DescribedTable, context: DescriptionContext) {
  const primaryKey = table.primaryKey;
  // The primary key is named only when the caller may read all of it.
  const keyNote =
    primaryKey.length > 0 && primaryKey.every((name) => view.read.some((c) => c.name === name))
      ? ` (primary key: ${primaryKey.join(', ')})`
      : '';
  return context.schema(names.row, () => ({
    ...rowSchema(view.read),
    description: `A row of ${table.kind} ${table.name}${keyNote}`,
  }));
}

const CSV_ROWS: JsonSchema = {
  'text/csv': {
    schema: {
      type: 'string',
      description:
        'With `Accept: text/csv`: RFC 4180, a header record of the column names, then one record a row; NULL is an empty field, an empty string `""`, an expanded relation its JSON',
    },
  },
};

const ACCEPT: JsonSchema = {
  name: 'Accept',
  in: 'header',
  required: false,
  schema: { type: 'string', default: 'application/json' },
  description: '`text/csv` answers CSV (RFC 4180) instead of JSON',
};

const EXPAND = query(
  '$expand',
  { type: 'string' },
  'Related rows to add, by relation name: `customer`, `items($select=qty;$top=3)`',
);

/** The single-column keys the caller may read: the primary key first, then unique ones. */
function readableKeys({ table, view }: DescribedTable): string[] {
  const readable = new Set(view.read.map((c) => c.name));
  const names = [table.primaryKey, ...table.uniqueKeys].flatMap((key) =>
    key.length === 1 && readable.has(key[0] as string) ? [key[0] as string] : [],
  );
  return [...new Set(names)].filter((name) => isSingleColumnKey(table, name));
}

export const keyReadOperation: TableOperation = {
  action: 'read',
  method: 'get',
  path: '/read({key},{value})',
  applies: (described) => readableKeys(described).length > 0,
  describe: (described, context) => {
    const { table, view, names } = described;
    return {
      tags: [names.tag],
      operationId: `read_key_${names.id}`,
      summary: `Read one row of ${table.kind} ${table.name} by its primary or a unique key`,
      parameters: [
        {
          name: 'key',
          in: 'path',
          required: true,
          schema: { type: 'string', enum: readableKeys(described) },
          description: 'The primary key or a unique column (alone)',
        },
        {
          name: 'value',
          in: 'path',
          required: true,
          schema: { type: 'string' },
          description:
            "Its value: a bare token (`5`) or a single-quoted string (`'ann@example.com'`), as update(…) takes it",
        },
        query(
          '$select',
          { type: 'string' },
          `Columns to return, comma-separated (default \`*\`): ${view.read.map((c) => c.name).join(', ')}`,
        ),
        context.parameter('expand', EXPAND),
        context.parameter('accept', ACCEPT),
      ],
      responses: {
        200: {
          description: 'The row, keys in select order',
          content: { ...json(rowRef(described, context)), ...CSV_ROWS },
        },
        ...context.errors('read-key', KEY_READ_STAGES, READ_MYSQL_STATUSES),
      },
    };
  },
};

export const readOperation: TableOperation = {
  action: 'read',
  method: 'get',
  path: '/read',
  schemas: { Apply: APPLY_SCHEMA },
  describe: (described, context) => {
    const { table, names } = described;
    const row = rowRef(described, context);
    return {
      tags: [names.tag],
      operationId: `read_${names.id}`,
      summary: `Read rows of ${table.kind} ${table.name}`,
      parameters: [...readParameters(described, context), context.parameter('accept', ACCEPT)],
      responses: {
        200: {
          description:
            'The rows, keys in select order; with `$apply`, one object per group: its groupby values, then its aliases',
          headers: {
            'X-Total-Count': {
              description: 'With `$count=true`: the rows the filter matches',
              schema: { type: 'integer' },
            },
          },
          content: { ...json({ type: 'array', items: row }), ...CSV_ROWS },
        },
        ...context.errors('read', READ_STAGES, READ_MYSQL_STATUSES),
      },
    };
  },
};
