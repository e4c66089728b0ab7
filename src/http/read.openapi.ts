/**
 * The description of `GET /table/<table>/read` (read.ts): the stages it runs, whose errors are
 * its error responses, and its operation — the `$…` options, `$select` naming only the columns
 * the caller may read, `$expand` naming only the relations it may follow (listed again as
 * `x-relations`), and rows of the row schema of those columns, with a key per relation.
 */
import type { Relation } from '../db/schema-types.js';
import type { Stage } from '../errors.js';
import { MAX_EXPAND_DEPTH, MAX_EXPANDED_RELATIONS, MAX_FILTER_BYTES } from '../limits.js';
import { rowSchema } from '../openapi/column-schema.js';
import { filterHelp } from '../openapi/filter-help.js';
import {
  type DescribedRelation,
  type DescribedTable,
  type DescriptionContext,
  type JsonSchema,
  json,
  type TableOperation,
} from '../openapi/operation.js';

/** A table the role may not read answers 404 (UNKNOWN_TABLE): reads are never FORBIDDEN. */
export const READ_STAGES: readonly Stage[] = ['read-options', 'request', 'table', 'execute'];
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

function readParameters(
  { view, relations }: DescribedTable,
  context: DescriptionContext,
): JsonSchema[] {
  const names = view.read.map((c) => c.name).join(', ');
  return [
    query(
      '$select',
      { type: 'string' },
      `Columns to return, comma-separated (default \`*\`): ${names}`,
    ),
    ...SHARED_OPTIONS.map(([name, parameter]) => context.parameter(name, parameter)),
    ...(relations.length > 0 ? [expandParameter(relations)] : []),
  ];
}

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
  describe: (described, context) => {
    const { table, view, names, relations } = described;
    const primaryKey = table.primaryKey;
    // The primary key is named only when the caller may read all of it.
    const keyNote =
      primaryKey.length > 0 && primaryKey.every((name) => view.read.some((c) => c.name === name))
        ? ` (primary key: ${primaryKey.join(', ')})`
        : '';
    const row = context.schema(names.row, () => {
      const schema = rowSchema(view.read);
      // No relation is named like a column of its table (db/relations.ts).
      const properties = { ...(schema.properties as Record<string, JsonSchema>) };
      for (const related of relations) {
        properties[related.relation.name] = relationProperty(related);
      }
      return {
        ...schema,
        properties,
        description: `A row of ${table.kind} ${table.name}${keyNote}`,
      };
    });
    return {
      tags: [names.tag],
      operationId: `read_${names.id}`,
      summary: `Read rows of ${table.kind} ${table.name}`,
      parameters: readParameters(described, context),
      ...(relations.length > 0 ? { 'x-relations': relationsExtension(relations) } : {}),
      responses: {
        200: {
          description: 'The rows, keys in select order',
          headers: {
            'X-Total-Count': {
              description: 'With `$count=true`: the rows the filter matches',
              schema: { type: 'integer' },
            },
          },
          content: json({ type: 'array', items: row }),
        },
        ...context.errors('read', READ_STAGES, READ_MYSQL_STATUSES),
      },
    };
  },
};
