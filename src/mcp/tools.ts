/**
 * The MCP tools (docs/mcp.md): their names, the descriptions and input schemas an agent reads,
 * and which of them a role is offered. Arguments are the REST request's options, as strings in
 * the REST syntax (`filter: "rating eq 'PG'"`), except rows, values and arguments (JSON) and
 * numbers; each tool builds the Operation of its REST request and handle runs it (run-tool.ts).
 */
import { MAX_APPLY_BYTES, MAX_FILTER_BYTES, MAX_INSERT_ROWS } from '../limits.js';

export type ToolName =
  | 'list_tables'
  | 'read_rows'
  | 'aggregate_rows'
  | 'create_rows'
  | 'update_rows'
  | 'delete_rows'
  | 'call_routine';

export interface Tool {
  readonly name: ToolName;
  readonly title: string;
  readonly description: string;
  readonly inputSchema: {
    readonly type: 'object';
    readonly properties: Readonly<Record<string, unknown>>;
    readonly required?: readonly string[];
    readonly additionalProperties: false;
  };
  readonly annotations: {
    readonly readOnlyHint: boolean;
    readonly destructiveHint: boolean;
    readonly idempotentHint: boolean;
    readonly openWorldHint: false;
  };
}

const TABLE = {
  type: 'string',
  description: 'The table or view, exactly as list_tables names it.',
};

const FILTER_SYNTAX =
  "OData $filter syntax: comparisons eq ne lt le gt ge; and, or, not, parentheses; strings in single quotes ('O''Brien'), numbers bare, null, true, false, dates 2024-01-31 and datetimes 2024-01-31T10:00:00Z unquoted; col in ('a','b'); contains(col,'x'), startswith(col,'x'), endswith(col,'x'); functions tolower toupper trim length year month day hour minute second date of a column; a column of a related row by its path customer/country; related rows with items/any(i: i/qty gt 5) or items/all(i: …). Column names that are not plain identifiers go in double quotes.";

const KEY = {
  key: {
    type: 'string',
    description:
      'A column that identifies the rows to change, usually the primary key (list_tables names it). Give key and value, or filter.',
  },
  value: {
    type: 'string',
    description:
      "That column's value, as in REST: a bare number or word (5, abc), or a single-quoted string ('O''Brien, Jo').",
  },
  filter: {
    type: 'string',
    maxLength: MAX_FILTER_BYTES,
    description:
      'Instead of key and value: every row this filter matches, e.g. "order_id eq 3 and line eq 2" (the read_rows filter syntax).',
  },
};

const READ_ONLY = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
} as const;

/** Every tool, in the order they are listed. */
export function tools(maxRows: number): readonly Tool[] {
  return [
    {
      name: 'list_tables',
      title: 'List tables',
      description:
        'Lists the tables and views you may use: their columns with types, whether they may be null, the primary key, the relations to other tables (for expand and filter paths) and the actions you may take (read, create, update, delete); and the stored procedures and functions you may call, with their parameters. Call it first.',
      inputSchema: { type: 'object', properties: {}, additionalProperties: false },
      annotations: READ_ONLY,
    },
    {
      name: 'read_rows',
      title: 'Read rows',
      description: `Reads rows of one table as JSON objects, at most ${maxRows} per call; the answer says when more exist (then read the next ones with skip). ${FILTER_SYNTAX}`,
      inputSchema: {
        type: 'object',
        properties: {
          table: TABLE,
          select: {
            type: 'string',
            description: 'Comma-separated column names to return (default: every column).',
          },
          filter: {
            type: 'string',
            maxLength: MAX_FILTER_BYTES,
            description: `Which rows, e.g. "price lt 20 and category eq 'tea'".`,
          },
          orderby: {
            type: 'string',
            description: 'Comma-separated columns, each optionally followed by asc or desc.',
          },
          top: { type: 'integer', minimum: 0, description: 'At most this many rows.' },
          skip: { type: 'integer', minimum: 0, description: 'Skip this many rows first.' },
          expand: {
            type: 'string',
            description:
              'Related rows to include, by relation name from list_tables: "customer,order_items($top=3;$expand=product)".',
          },
          count: {
            type: 'boolean',
            description: 'Also return the number of rows the filter matches (ignoring top/skip).',
          },
        },
        required: ['table'],
        additionalProperties: false,
      },
      annotations: READ_ONLY,
    },
    {
      name: 'aggregate_rows',
      title: 'Aggregate rows',
      description: `Totals computed by the database instead of rows: groups with sums, averages, minimums, maximums and counts, at most ${maxRows} groups per call (the answer says when more exist). One object per group: its groupby values, then the aliases.`,
      inputSchema: {
        type: 'object',
        properties: {
          table: TABLE,
          apply: {
            type: 'string',
            maxLength: MAX_APPLY_BYTES,
            description:
              "OData $apply: groupby((col1,col2),aggregate(col with sum as alias, col with average as alias2, $count as n)); methods sum, average, min, max, countdistinct; steps joined by '/': filter(<filter>)/groupby(...), compute(year(placed) as y)/groupby((y),...). aggregate(...) alone totals every row. Columns of a to-one related row by path: groupby((customer/country),...).",
          },
          filter: {
            type: 'string',
            maxLength: MAX_FILTER_BYTES,
            description: 'Which rows to total, before grouping (the read_rows filter syntax).',
          },
          orderby: {
            type: 'string',
            description:
              'Comma-separated groupby columns or aliases, each optionally followed by asc or desc.',
          },
          top: { type: 'integer', minimum: 0, description: 'At most this many groups.' },
          skip: { type: 'integer', minimum: 0, description: 'Skip this many groups first.' },
        },
        required: ['table', 'apply'],
        additionalProperties: false,
      },
      annotations: READ_ONLY,
    },
    {
      name: 'create_rows',
      title: 'Create rows',
      description: `Inserts one row (a JSON object of column values) or up to ${MAX_INSERT_ROWS} rows (an array of objects) into a table, all or none. Columns left out take their defaults. Answers the first generated id and the number of rows inserted.`,
      inputSchema: {
        type: 'object',
        properties: {
          table: TABLE,
          rows: {
            description: 'One object of column values, or an array of such objects.',
            oneOf: [{ type: 'object' }, { type: 'array', items: { type: 'object' }, minItems: 1 }],
          },
        },
        required: ['table', 'rows'],
        additionalProperties: false,
      },
      annotations: {
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: false,
        openWorldHint: false,
      },
    },
    {
      name: 'update_rows',
      title: 'Update rows',
      description:
        'Sets the given column values on every row whose key column has the given value (or that the filter matches). Answers how many rows matched.',
      inputSchema: {
        type: 'object',
        properties: {
          table: TABLE,
          ...KEY,
          values: {
            type: 'object',
            description: 'The columns to set and their new values, e.g. {"status": "shipped"}.',
          },
        },
        required: ['table', 'values'],
        additionalProperties: false,
      },
      annotations: {
        readOnlyHint: false,
        destructiveHint: true,
        idempotentHint: true,
        openWorldHint: false,
      },
    },
    {
      name: 'delete_rows',
      title: 'Delete rows',
      description:
        'Deletes every row whose key column has the given value (or that the filter matches). Answers how many rows were deleted. This cannot be undone.',
      inputSchema: {
        type: 'object',
        properties: { table: TABLE, ...KEY },
        required: ['table'],
        additionalProperties: false,
      },
      annotations: {
        readOnlyHint: false,
        destructiveHint: true,
        idempotentHint: true,
        openWorldHint: false,
      },
    },
    {
      name: 'call_routine',
      title: 'Call a stored procedure or function',
      description:
        'Calls a stored procedure or function that list_tables names, with its IN and INOUT parameters by name. A procedure answers its result sets (arrays of row objects) and its OUT and INOUT values; a function answers its value. A procedure may change data: it runs as its author wrote it.',
      inputSchema: {
        type: 'object',
        properties: {
          name: {
            type: 'string',
            description: 'The procedure or function, exactly as list_tables names it.',
          },
          arguments: {
            type: 'object',
            description:
              'The IN and INOUT parameters by name, as JSON values of their types, e.g. {"customer_id": 3, "since": "2024-01-01"}. Leave it out for none.',
          },
        },
        required: ['name'],
        additionalProperties: false,
      },
      annotations: {
        readOnlyHint: false,
        destructiveHint: true,
        idempotentHint: false,
        openWorldHint: false,
      },
    },
  ];
}
