/**
 * The descriptions of `GET /table/<table>/read` and `GET /table/<table>/read(<key>,<value>)`
 * (read.ts): the stages each runs, whose errors are its error responses, and the operations —
 * the `$…` options, `$select` naming only the columns the caller may read, `$expand` only the
 * relations it may follow (listed again as `x-relations`), `$apply` the columns its aggregates
 * may take, and rows of the row schema of those columns with a key per relation (or, with
 * `$apply`, groups), as JSON, or CSV when Accept asks for it.
 */
import type { Relation } from '../db/schema-types.js';
import type { Stage } from '../errors.js';
import {
  MAX_APPLY_BYTES,
  MAX_EXPAND_DEPTH,
  MAX_EXPANDED_RELATIONS,
  MAX_FILTER_BYTES,
} from '../limits.js';
import { rowSchema } from '../openapi/column-schema.js';
import { filterHelp } from '../openapi/filter-help.js';
import {
  type DescribedRelation,
  type DescribedTable,
  type DescriptionContext,
  headerParameter,
  type JsonSchema,
  json,
  type TableOperation,
} from '../openapi/operation.js';
import { aggregatable } from '../plan/apply-types.js';
import { isSingleColumnKey } from '../plan/unique-keys.js';

/** A table the role may not read answers 404 (UNKNOWN_TABLE): reads are never FORBIDDEN. */
export const READ_STAGES: readonly Stage[] = [
  'read-options',
  'read-cost',
  'request',
  'table',
  'execute',
];
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
      '`col`, `col asc` or `col desc`, comma-separated; give one for stable pages. A path through to-one relations names a related column: `customer/last_name desc`',
    ),
  ],
  ['top', query('$top', { type: 'integer', minimum: 0 }, 'At most this many rows')],
  [
    'skip',
    query(
      '$skip',
      { type: 'integer', minimum: 0 },
      'Skip this many rows first (page N of size S: `$top=S&$skip=(N-1)*S`); for big tables follow the `Link` header instead',
    ),
  ],
  [
    'skiptoken',
    query(
      '$skiptoken',
      { type: 'string', pattern: '^[A-Za-z0-9_-]+$' },
      'Where the next page starts: take it from the `Link` header of the page before, never write it. Only with the same `$filter`, `$orderby`, `$select` and `$expand` as that page, and without `$skip`',
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

/**
 * What a read with `$apply` answers in place of rows (docs/totals.md), once per document: one
 * object per group. Its keys are the groupby values and the aliases the request names, and an
 * alias may be any name (a column's too, holding an aggregate of another type), so nothing more
 * of it can be said in advance than that it is an object. `additionalProperties: true` is said
 * outright: JSON Schema assumes it, but a generated client (openapi-typescript) reads an object
 * schema without it as one with no keys at all.
 */
const GROUP_SCHEMA: JsonSchema = {
  type: 'object',
  description: [
    'With `$apply`: one group, its groupby values in groupby order (a path through to-one',
    'relations as nested objects: `{"customer": {"country": "Japan"}}`), then its aggregates',
    'under their aliases; without groupby and aggregate, a row with its computed values after',
    'its columns.',
  ].join(' '),
  additionalProperties: true,
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

/** `to-one` or `to-many`, as the description names the kinds. */
const kindOf = (relation: Relation) => (relation.kind === 'one' ? 'to-one' : 'to-many');

/** `order_id → id`: which column equals which, for the reader of the description. */
const keyText = (relation: Relation) =>
  relation.on.map(({ local, remote }) => `${local.name} → ${remote.name}`).join(', ');

/** The `$expand` option of a table with relations: its syntax, limits and the relations. */
function expandParameter(relations: readonly DescribedRelation[]): JsonSchema {
  const list = relations
    .map(({ relation }) => `\`${relation.name}\` (${kindOf(relation)} → ${relation.target.name})`)
    .join(', ');
  const [first] = relations;
  const example =
    relations.find(({ relation }) => relation.kind === 'many')?.relation.name ??
    first?.relation.name;
  return query(
    '$expand',
    { type: 'string' },
    [
      `Related rows to add to each row, comma-separated. Relations here: ${list}.`,
      'A to-one relation adds the related row as an object (or null), a to-many one an array of rows',
      '(`[]` when none, ordered by the related primary key).',
      'Options in parentheses after a relation, separated by `;`: `$select`, `$filter`, `$orderby`,',
      '`$top`, `$skip` (the last three per row, to-many relations only) and `$expand` (nested);',
      `a path \`a/b\` is \`a($expand=b)\`. E.g. \`${example}($select=…;$top=3)\`.`,
      `Limits: ${MAX_EXPAND_DEPTH} levels, ${MAX_EXPANDED_RELATIONS} relations per request; each nested $filter has the limits of $filter.`,
      'An unknown relation is 400 UNKNOWN_RELATION.',
    ].join(' '),
  );
}

function readParameters(described: DescribedTable, context: DescriptionContext): JsonSchema[] {
  const { view, relations } = described;
  const names = view.read.map((c) => c.name).join(', ');
  return [
    query(
      '$select',
      { type: 'string' },
      `Columns to return, comma-separated (default \`*\`): ${names}`,
    ),
    ...SHARED_OPTIONS.map(([name, parameter]) => context.parameter(name, parameter)),
    applyParameter(described, context),
    ...(relations.length > 0 ? [expandParameter(relations)] : []),
  ];
}

/** The row schema of the columns the caller may read (one component per table). */
export function rowRef(described: DescribedTable, context: DescriptionContext) {
  const { table, view, names } = described;
  const primaryKey = table.primaryKey;
  // The primary key is named only when the caller may read all of it.
  const keyNote =
    primaryKey.length > 0 && primaryKey.every((name) => view.read.some((c) => c.name === name))
      ? ` (primary key: ${primaryKey.join(', ')})`
      : '';
  return context.schema(names.row, () => {
    const schema = rowSchema(view.read);
    // No relation is named like a column of its table (db/relations.ts).
    const properties = { ...(schema.properties as Record<string, JsonSchema>) };
    for (const related of described.relations) {
      properties[related.relation.name] = relationProperty(related);
    }
    return { ...schema, properties, description: `A row of ${table.kind} ${table.name}${keyNote}` };
  });
}

/**
 * CSV is said in words, not as a second media type of the 200: generated clients type an answer
 * as the union of every media type a success lists (openapi-typescript with openapi-fetch gives
 * `rows[] | string`), while a request that does not ask for CSV always gets JSON (docs/openapi.md).
 */
const CSV_NOTE =
  'With `Accept: text/csv` the same answer comes as CSV instead (`text/csv; charset=utf-8`, RFC 4180): a header record of the column names, then one record a row; NULL is an empty field, an empty string `""`, an expanded relation its JSON';

const ACCEPT = headerParameter('Accept', '`text/csv` answers CSV (RFC 4180) instead of JSON', {
  type: 'string',
  default: 'application/json',
});

/** The single-column keys the caller may read: the primary key first, then unique ones. */
function readableKeys({ table, view }: DescribedTable): string[] {
  const readable = new Set(view.read.map((c) => c.name));
  const names = [table.primaryKey, ...table.uniqueKeys].flatMap((key) =>
    key.length === 1 && readable.has(key[0] as string) ? [key[0] as string] : [],
  );
  return [...new Set(names)].filter((name) => isSingleColumnKey(table, name));
}

/** If-None-Match and what it may answer (docs/caching.md). */
const IF_NONE_MATCH = headerParameter(
  'If-None-Match',
  'An ETag this URL gave (several comma-separated, `W/` accepted, or `*`): while the answer is the same, 304 with no body',
);
const ETAG_HEADER = {
  ETag: {
    description: 'SHA-1 of exactly this answer (docs/caching.md)',
    schema: { type: 'string' },
  },
};
const NOT_MODIFIED = {
  304: {
    description: "Not modified: the ETag sent in If-None-Match is still the answer's",
    headers: ETAG_HEADER,
  },
};

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
        ...(described.relations.length > 0 ? [expandParameter(described.relations)] : []),
        context.parameter('accept', ACCEPT),
        context.parameter('if-none-match', IF_NONE_MATCH),
      ],
      responses: {
        200: {
          description: `The row, keys in select order. ${CSV_NOTE}`,
          headers: ETAG_HEADER,
          content: json(rowRef(described, context)),
        },
        ...NOT_MODIFIED,
        ...context.errors('read-key', KEY_READ_STAGES, READ_MYSQL_STATUSES),
      },
    };
  },
};

/** The row's key for an expanded relation: the related row or null, or an array of rows. */
function relationProperty({ relation, row }: DescribedRelation): JsonSchema {
  const key = `(${keyText(relation)})`;
  return relation.kind === 'one'
    ? {
        description: `With \`$expand=${relation.name}\`: the row of ${relation.target.name} ${key}, or null`,
        anyOf: [row, { type: 'null' }],
      }
    : {
        description: `With \`$expand=${relation.name}\`: the rows of ${relation.target.name} ${key}`,
        type: 'array',
        items: row,
      };
}

/** `x-relations`: each relation the caller may follow, its kind, target and key columns. */
function relationsExtension(relations: readonly DescribedRelation[]): JsonSchema {
  return Object.fromEntries(
    relations.map(({ relation }) => [
      relation.name,
      {
        kind: kindOf(relation),
        target: relation.target.name,
        columns: Object.fromEntries(
          relation.on.map(({ local, remote }) => [local.name, remote.name]),
        ),
      },
    ]),
  );
}

export const readOperation: TableOperation = {
  action: 'read',
  method: 'get',
  path: '/read',
  schemas: { Apply: APPLY_SCHEMA, ApplyGroup: GROUP_SCHEMA },
  describe: (described, context) => {
    const { table, names, relations } = described;
    const row = rowRef(described, context);
    return {
      tags: [names.tag],
      operationId: `read_${names.id}`,
      summary: `Read rows of ${table.kind} ${table.name}`,
      parameters: [
        ...readParameters(described, context),
        context.parameter('accept', ACCEPT),
        context.parameter('if-none-match', IF_NONE_MATCH),
      ],
      ...(relations.length > 0 ? { 'x-relations': relationsExtension(relations) } : {}),
      responses: {
        200: {
          description: `The rows, keys in select order; with \`$apply\`, one object per group: its groupby values, then its aliases. ${CSV_NOTE}`,
          headers: {
            ...ETAG_HEADER,
            'X-Total-Count': {
              description: 'With `$count=true`: the rows the filter matches',
              schema: { type: 'integer' },
            },
            Link: {
              description:
                'With `$top`, when the page is full: `<URL>; rel="next"` (RFC 8288), the same request with `$skiptoken` in place of `$skip`. The URL is relative to this request unless the gateway runs with `--base-url`. Each row comes once whatever is inserted or deleted between pages',
              schema: { type: 'string' },
            },
          },
          content: json({ type: 'array', items: { anyOf: [row, context.shared('ApplyGroup')] } }),
        },
        ...NOT_MODIFIED,
        ...context.errors('read', READ_STAGES, READ_MYSQL_STATUSES),
      },
    };
  },
};
