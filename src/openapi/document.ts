/**
 * The OpenAPI 3.1 description of the gateway, built from the tables of the schema cache and the
 * configuration: per table and view its read, create, update and delete operations with typed
 * rows (column-schema.ts), the auth, upload, file and health endpoints, every error response with
 * its codes (error-codes.ts), and in auth mode the Bearer scheme. Pure: (tables, config) → object.
 */
import type { Config } from '../config.js';
import type { ColumnInfo, TableInfo } from '../db/schema-types.js';
import { ERRORS, type Stage } from '../errors.js';
import {
  EMAIL_MAX_LENGTH,
  MAX_FILTER_BYTES,
  MAX_IN_VALUES,
  MAX_INSERT_ROWS,
  MAX_NESTING,
  MAX_PATTERN_CHARS,
  PASSWORD_MAX_LENGTH,
  PASSWORD_MIN_LENGTH,
} from '../limits.js';
import { SUCCESS_MESSAGES } from '../messages.js';
import { insertSchema, type JsonSchema, rowSchema, updateSchema } from './column-schema.js';
import { codesOf, ERROR_SCHEMA, errorResponses, GENERAL_ERROR_STAGES } from './error-codes.js';

export type DocumentConfig = Pick<
  Config,
  'mode' | 'baseUrl' | 'maxFileSize' | 'maxFiles' | 'bodyLimit'
> & { readonly db: { readonly database: string } };

export type OpenApiDocument = JsonSchema & { openapi: string; paths: Record<string, JsonSchema> };

/** What one caller may use of a table under a policy (http/docs.ts builds it from the policy). */
export interface TableView {
  readonly read: readonly ColumnInfo[];
  /** Absent when the action is not granted. */
  readonly create?: readonly ColumnInfo[];
  readonly update?: readonly ColumnInfo[];
  readonly delete?: true;
}

/** A policy's view for one caller: per table its view (null hides it), and the file routes. */
export interface DocumentView {
  table(table: TableInfo): TableView | null;
  readonly upload: boolean;
  readonly download: boolean;
}

const FULL_VIEW: DocumentView = {
  table: (table) => ({
    read: table.columns,
    create: table.columns,
    update: table.columns,
    delete: true,
  }),
  upload: true,
  download: true,
};

export const BEARER_SCHEME = 'bearerAuth';

const json = (schema: JsonSchema) => ({ 'application/json': { schema } });
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** Component keys must match ^[a-zA-Z0-9.\-_]+$ (OpenAPI 3.1 §4.8.7.1); table names need not. */
function uniqueName(wanted: string, taken: Set<string>, suffix = ''): string {
  const base = (wanted.replace(/[^A-Za-z0-9_-]/g, '_') || '_') + suffix;
  let name = base;
  for (let n = 2; taken.has(name); n++) name = `${base}_${n}`;
  taken.add(name);
  return name;
}

/** One path segment, percent-encoded the way a client sends it. */
function segment(name: string): string {
  return encodeURIComponent(name);
}

const FIXED_SCHEMAS: Readonly<Record<string, JsonSchema>> = {
  Error: ERROR_SCHEMA,
  InsertResult: {
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
      affectedRows: { type: 'integer', minimum: 0 },
    },
  },
  UpdateResult: {
    type: 'object',
    required: ['success', 'message', 'affectedRows'],
    properties: {
      success: { const: true },
      message: { const: SUCCESS_MESSAGES.updated },
      affectedRows: { type: 'integer', minimum: 0, description: 'Rows the key matched' },
    },
  },
  DeleteResult: {
    type: 'object',
    required: ['success', 'message', 'affectedRows'],
    properties: {
      success: { const: true },
      message: { const: SUCCESS_MESSAGES.deleted },
      affectedRows: { type: 'integer', minimum: 0 },
    },
  },
  FileRecord: {
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
  },
  Index: {
    type: 'object',
    required: ['name', 'version', 'links'],
    properties: {
      name: { const: 'tablegate' },
      version: { type: 'string' },
      links: {
        type: 'object',
        required: ['docs', 'openapi', 'health'],
        properties: {
          docs: { const: '/docs' },
          openapi: { const: '/openapi.json' },
          health: { const: '/health' },
        },
      },
    },
  },
  Health: {
    type: 'object',
    required: ['status'],
    properties: { status: { enum: ['ok', 'unavailable'] } },
  },
};

const AUTH_SCHEMAS: Readonly<Record<string, JsonSchema>> = {
  Credentials: {
    type: 'object',
    required: ['email', 'password'],
    properties: {
      email: { type: 'string', maxLength: EMAIL_MAX_LENGTH, examples: ['demo@tablegate.dev'] },
      password: { type: 'string', minLength: PASSWORD_MIN_LENGTH, maxLength: PASSWORD_MAX_LENGTH },
    },
  },
  RegisterResult: {
    type: 'object',
    required: ['success', 'message'],
    properties: { success: { const: true }, message: { const: SUCCESS_MESSAGES.registered } },
  },
  LoginResult: {
    type: 'object',
    required: ['success', 'token'],
    properties: {
      success: { const: true },
      token: {
        type: 'string',
        description: 'A JWT (HS256): send it as `Authorization: Bearer <token>`',
      },
    },
  },
  Me: {
    type: 'object',
    required: ['id', 'email', 'role'],
    properties: {
      id: { type: 'string', description: 'What `@user.id` is in a policy' },
      email: { type: ['string', 'null'], description: 'null when the token carries none' },
      role: { type: 'string' },
    },
  },
  PasswordChange: {
    type: 'object',
    required: ['old_password', 'new_password'],
    properties: {
      old_password: { type: 'string' },
      new_password: {
        type: 'string',
        minLength: PASSWORD_MIN_LENGTH,
        maxLength: PASSWORD_MAX_LENGTH,
      },
    },
  },
  PasswordChanged: {
    type: 'object',
    required: ['success', 'message', 'token'],
    properties: {
      success: { const: true },
      message: { const: SUCCESS_MESSAGES.passwordChanged },
      token: { type: 'string', description: 'A new token: the ones before stop working' },
    },
  },
};

/** The stages each operation runs (its error responses are theirs, openapi/error-codes.ts). */
const TABLE_STAGES: readonly Stage[] = ['request', 'table', 'execute'];
const READ_STAGES: readonly Stage[] = ['read-options', ...TABLE_STAGES];
const WRITE_STAGES: readonly Stage[] = [...TABLE_STAGES, 'write'];
// A table the role may not read answers 404 (UNKNOWN_TABLE), so reads are never FORBIDDEN.
const CREATE_STAGES: readonly Stage[] = [
  'json-body',
  'values',
  'rows',
  ...WRITE_STAGES,
  'policy-action',
  'policy-rows',
];
const UPDATE_STAGES: readonly Stage[] = [
  'key',
  'json-body',
  'values',
  ...WRITE_STAGES,
  'policy-action',
  'policy-rows',
];
const DELETE_STAGES: readonly Stage[] = ['key', ...WRITE_STAGES, 'policy-action'];
/** Stages that exist only under a policy. */
const POLICY_STAGES: ReadonlySet<Stage> = new Set(['policy-action', 'policy-rows']);
// Registering inserts the user: a write (WRITE_OUTCOME_UNKNOWN).
const REGISTER_STAGES: readonly Stage[] = ['json-body', 'register', 'request', 'execute', 'write'];
const LOGIN_STAGES: readonly Stage[] = ['json-body', 'login', 'request', 'execute'];
/** MySQL's refusals (its error names as codes): reads may be refused, writes also conflict. */
const MYSQL_READ = { mysql: [400, 403, 404] };
const MYSQL_WRITE = { mysql: [400, 403, 404, 409] };

const FILTER_HELP = [
  "A condition on the columns: `price gt 10 and category eq 'tea'`, `city eq null`,",
  "`not (status in ('new', 'paid'))`, `contains(name,'tea')`, `startswith(name,'T')`.",
  'Operators `eq ne lt le gt ge`, `and or not`, parentheses; strings in single quotes',
  "(`''` for a quote). Unquoted dates and times: `created_at ge 2024-01-03`,",
  '`created_at lt 2024-01-03T10:00:00.000Z` (`Z` or an offset like `+02:00`, compared in UTC),',
  '`opens lt 09:30:00` (TIME columns). Functions on a column: `tolower toupper trim length`',
  '(text), `year month day hour minute second date` (dates and times), e.g.',
  "`contains(tolower(name),'tea')`, `year(created_at) eq 2024`; a function on a column cannot",
  'use its index. A date or function on a column of the wrong type is 400 FILTER_TYPE.',
  `Limits: ${MAX_FILTER_BYTES} bytes, ${MAX_NESTING} levels of nesting, ${MAX_IN_VALUES} \`in\` values, ${MAX_PATTERN_CHARS} characters of contains/startswith/endswith patterns in all.`,
].join(' ');

function readParameters(table: TableInfo): JsonSchema[] {
  const names = table.columns.map((c) => c.name).join(', ');
  const query = (name: string, schema: JsonSchema, description: string) => ({
    name,
    in: 'query',
    required: false,
    schema,
    description,
  });
  return [
    query(
      '$select',
      { type: 'string' },
      `Columns to return, comma-separated (default \`*\`): ${names}`,
    ),
    query('$filter', { type: 'string', maxLength: MAX_FILTER_BYTES }, FILTER_HELP),
    query(
      '$orderby',
      { type: 'string' },
      '`col`, `col asc` or `col desc`, comma-separated; give one for stable pages',
    ),
    query('$top', { type: 'integer', minimum: 0 }, 'At most this many rows'),
    query(
      '$skip',
      { type: 'integer', minimum: 0 },
      'Skip this many rows first (page N of size S: `$top=S&$skip=(N-1)*S`)',
    ),
    query(
      '$count',
      { type: 'boolean' },
      '`true` adds the header `X-Total-Count`: the rows the filter matches, ignoring $top and $skip',
    ),
  ];
}

function keyParameters(table: TableInfo): JsonSchema[] {
  // The primary key first: the usual choice, and what the UI offers by default.
  const keys = [
    ...table.primaryKey,
    ...table.columns.map((c) => c.name).filter((n) => !table.primaryKey.includes(n)),
  ];
  return [
    {
      name: 'key',
      in: 'path',
      required: true,
      schema: { type: 'string', enum: keys },
      description: 'The column that selects the rows',
    },
    {
      name: 'value',
      in: 'path',
      required: true,
      schema: { type: 'string' },
      description:
        "The value rows must have in that column: a bare token (`5`, `null`) or a single-quoted string (`'O''Brien, Jo'`)",
    },
  ];
}

interface Names {
  readonly tag: string;
  readonly id: string;
  readonly row: string;
  readonly insert: string;
  readonly update: string;
}

function tablePaths(
  table: TableInfo,
  names: Names,
  guarded: (stages: readonly Stage[]) => Stage[],
  view: TableView,
): Record<string, JsonSchema> {
  const all = allTablePaths(table, names, guarded);
  const base = `/table/${segment(table.name)}`;
  const paths: Record<string, JsonSchema> = { [`${base}/read`]: all[`${base}/read`] as JsonSchema };
  if (view.create) paths[`${base}/create`] = all[`${base}/create`] as JsonSchema;
  if (view.update) {
    paths[`${base}/update({key},{value})`] = all[`${base}/update({key},{value})`] as JsonSchema;
  }
  if (view.delete) {
    paths[`${base}/delete({key},{value})`] = all[`${base}/delete({key},{value})`] as JsonSchema;
  }
  return paths;
}

function allTablePaths(
  table: TableInfo,
  names: Names,
  guarded: (stages: readonly Stage[]) => Stage[],
): Record<string, JsonSchema> {
  const base = `/table/${segment(table.name)}`;
  const what = table.kind === 'view' ? 'view' : 'table';
  const viewNote =
    table.kind === 'view'
      ? ' MySQL writes only through simple views (no GROUP BY, DISTINCT, aggregates or UNION).'
      : '';
  const tags = [names.tag];
  return {
    [`${base}/read`]: {
      get: {
        tags,
        operationId: `read_${names.id}`,
        summary: `Read rows of ${what} ${table.name}`,
        parameters: readParameters(table),
        responses: {
          200: {
            description: 'The rows, keys in select order',
            headers: {
              'X-Total-Count': {
                description: 'With `$count=true`: the rows the filter matches',
                schema: { type: 'integer' },
              },
            },
            content: json({ type: 'array', items: ref(names.row) }),
          },
          ...errorResponses(guarded(READ_STAGES), MYSQL_READ),
        },
      },
    },
    [`${base}/create`]: {
      post: {
        tags,
        operationId: `create_${names.id}`,
        summary: `Insert rows into ${what} ${table.name}`,
        description: `One row, or an array of rows inserted in one transaction (all or none).${viewNote}`,
        requestBody: {
          required: true,
          content: json({
            oneOf: [
              ref(names.insert),
              { type: 'array', minItems: 1, maxItems: MAX_INSERT_ROWS, items: ref(names.insert) },
            ],
          }),
        },
        responses: {
          200: { description: 'Inserted', content: json(ref('InsertResult')) },
          ...errorResponses(guarded(CREATE_STAGES), MYSQL_WRITE),
        },
      },
    },
    [`${base}/update({key},{value})`]: {
      put: {
        tags,
        operationId: `update_${names.id}`,
        summary: `Update rows of ${what} ${table.name} where key = value`,
        description: `No matching row is not an error: \`affectedRows\` is 0.${viewNote}`,
        parameters: keyParameters(table),
        requestBody: { required: true, content: json(ref(names.update)) },
        responses: {
          200: { description: 'Updated', content: json(ref('UpdateResult')) },
          ...errorResponses(guarded(UPDATE_STAGES), MYSQL_WRITE),
        },
      },
    },
    [`${base}/delete({key},{value})`]: {
      delete: {
        tags,
        operationId: `delete_${names.id}`,
        summary: `Delete rows of ${what} ${table.name} where key = value`,
        description: `No matching row is not an error: \`affectedRows\` is 0.${viewNote}`,
        parameters: keyParameters(table),
        responses: {
          200: { description: 'Deleted', content: json(ref('DeleteResult')) },
          ...errorResponses(guarded(DELETE_STAGES), MYSQL_WRITE),
        },
      },
    },
  };
}

function authPaths(guarded: (stages: readonly Stage[]) => Stage[]): Record<string, JsonSchema> {
  const credentials = { required: true, content: json(ref('Credentials')) };
  return {
    '/auth/register': {
      post: {
        tags: ['auth'],
        operationId: 'register',
        summary: 'Register a user',
        security: [],
        requestBody: credentials,
        responses: {
          200: { description: 'Registered', content: json(ref('RegisterResult')) },
          ...errorResponses(REGISTER_STAGES),
        },
      },
    },
    '/auth/login': {
      post: {
        tags: ['auth'],
        operationId: 'login',
        summary: 'Log in: get a token',
        description:
          'The token goes in `Authorization: Bearer <token>`. In this page a successful login authorizes the page too.',
        security: [],
        requestBody: credentials,
        responses: {
          200: { description: 'Logged in', content: json(ref('LoginResult')) },
          ...errorResponses(LOGIN_STAGES),
        },
      },
    },
    '/auth/me': {
      get: {
        tags: ['auth'],
        operationId: 'me',
        summary: 'Who the token says the caller is',
        responses: {
          200: { description: 'The caller', content: json(ref('Me')) },
          ...errorResponses(guarded(['request'])),
        },
      },
    },
    '/auth/password': {
      post: {
        tags: ['auth'],
        operationId: 'changePassword',
        summary: "Change the caller's password",
        description:
          "For the gateway's own users. Every token signed before stops working within 10 s; the answer carries a new one.",
        requestBody: { required: true, content: json(ref('PasswordChange')) },
        responses: {
          200: { description: 'Changed', content: json(ref('PasswordChanged')) },
          ...errorResponses(guarded(['json-body', 'password', 'login', 'request', 'execute'])),
        },
      },
    },
  };
}

function otherPaths(
  config: DocumentConfig,
  guarded: (stages: readonly Stage[]) => Stage[],
  auth: boolean,
): Record<string, JsonSchema> {
  const mib = (bytes: number) => `${Math.round((bytes / 1024 / 1024) * 100) / 100} MiB`;
  return {
    '/upload': {
      post: {
        tags: ['files'],
        operationId: 'upload',
        summary: 'Upload files',
        description: `One or more parts named \`files\`: at most ${config.maxFiles} files of ${mib(config.maxFileSize)} each. Each is stored under a new name that keeps its extension.`,
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
                    maxItems: config.maxFiles,
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
                data: { type: 'array', items: ref('FileRecord') },
              },
            }),
          },
          ...errorResponses(guarded(['upload', 'request', 'policy-action'])),
        },
      },
    },
    '/@/{filename}': {
      get: {
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
          { name: 'Range', in: 'header', required: false, schema: { type: 'string' } },
        ],
        responses: {
          200: { description: 'The file', content: { '*/*': { schema: {} } } },
          206: { description: 'The requested range', content: { '*/*': { schema: {} } } },
          ...errorResponses(guarded(['files', 'request', 'policy-action'])),
        },
      },
    },
    '/': {
      get: {
        tags: ['health'],
        operationId: 'index',
        summary: 'Name, version and where to go next',
        responses: {
          200: { description: 'The index', content: json(ref('Index')) },
          ...errorResponses(guarded(['request'])),
        },
      },
    },
    '/live': {
      get: {
        tags: ['health'],
        operationId: 'live',
        summary: 'Does the process serve? (liveness: asks MySQL nothing)',
        ...(auth ? { security: [] } : {}),
        responses: {
          200: { description: 'The process serves HTTP', content: json(ref('Health')) },
        },
      },
    },
    '/health': {
      get: {
        tags: ['health'],
        operationId: 'health',
        summary: 'Does MySQL answer? (readiness)',
        ...(auth ? { security: [] } : {}),
        responses: {
          200: { description: 'MySQL answers', content: json(ref('Health')) },
          503: { description: 'MySQL does not answer', content: json(ref('Health')) },
        },
      },
    },
    '/openapi.json': {
      get: {
        tags: ['health'],
        operationId: 'openapi',
        summary: 'This description',
        responses: {
          200: { description: 'OpenAPI 3.1', content: json({ type: 'object' }) },
          ...errorResponses(guarded(['request'])),
        },
      },
    },
  };
}

function describeApi(config: DocumentConfig): string {
  const lines = [
    `Every table and view of the MySQL database \`${config.db.database}\`, read live from its schema.`,
    'Rows are JSON objects; reads take `$select`, `$filter`, `$orderby`, `$top`, `$skip` and `$count`.',
    'Every error is `{"success": false, "message": …, "code": …}`.',
    `Besides each operation's own errors, any request may get ${codesOf(GENERAL_ERROR_STAGES)
      .map((code) => `\`${code}\` (${ERRORS[code].status})`)
      .join(
        ', ',
      )}: the request was not valid HTTP, too slow or too large, no route matched, or a streamed read whose client took nothing for too long was cut short.`,
  ];
  if (config.mode === 'auth') {
    lines.push(
      '',
      'Auth mode: every operation needs `Authorization: Bearer <token>` except register, login and health.',
      'Log in with **POST /auth/login** (Try it out) or paste a token in **Authorize**.',
    );
  }
  return lines.join('\n');
}

/** The whole description of the gateway serving `tables` with `config`. */
export function buildOpenApiDocument(
  tables: Iterable<TableInfo>,
  config: DocumentConfig,
  version = '0.0.0',
  /** Under a policy: only what the caller may use (CONTRACT §6). */
  view: DocumentView = FULL_VIEW,
): OpenApiDocument {
  const auth = config.mode === 'auth';
  // An operation's policy stages (FORBIDDEN, POLICY_VIOLATION) apply only under a policy.
  const underPolicy = view !== FULL_VIEW;
  const guarded = (stages: readonly Stage[]): Stage[] => {
    const applying = stages.filter((stage) => underPolicy || !POLICY_STAGES.has(stage));
    return auth ? ['guard', ...applying] : applying;
  };
  const sorted = [...tables].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const schemas: Record<string, JsonSchema> = { ...FIXED_SCHEMAS, ...(auth ? AUTH_SCHEMAS : {}) };
  const taken = new Set(Object.keys(schemas));
  const ids = new Set<string>();
  // Tag names must be unique; a table called `auth` keeps a tag of its own.
  const tagNames = new Set(['auth', 'files', 'health']);
  let paths: Record<string, JsonSchema> = auth ? authPaths(guarded) : {};
  const tags: JsonSchema[] = auth ? [{ name: 'auth', description: 'Register and log in' }] : [];
  for (const table of sorted) {
    const tableView = view.table(table);
    if (tableView === null) continue;
    const row = uniqueName(table.name, taken);
    let tag = table.name;
    for (let n = 2; tagNames.has(tag); n++) tag = `${table.name} (${table.kind} ${n})`;
    tagNames.add(tag);
    const names: Names = {
      tag,
      id: uniqueName(table.name, ids),
      row,
      insert: uniqueName(row, taken, '.insert'),
      update: uniqueName(row, taken, '.update'),
    };
    schemas[names.row] = {
      ...rowSchema(tableView.read),
      description: `A row of ${table.kind} ${table.name}${table.primaryKey.length > 0 ? ` (primary key: ${table.primaryKey.join(', ')})` : ''}`,
    };
    if (tableView.create) schemas[names.insert] = insertSchema(tableView.create);
    if (tableView.update) schemas[names.update] = updateSchema(tableView.update);
    tags.push({
      name: tag,
      description: `${table.kind === 'view' ? 'View' : 'Table'} ${table.name}`,
    });
    paths = { ...paths, ...tablePaths(table, names, guarded, tableView) };
  }
  tags.push({ name: 'files', description: 'Uploads' }, { name: 'health', description: 'Service' });
  const other = otherPaths(config, guarded, auth);
  if (!view.upload) delete other['/upload'];
  if (!view.download) delete other['/@/{filename}'];
  paths = { ...paths, ...other };
  return {
    openapi: '3.1.0',
    info: { title: `tablegate: ${config.db.database}`, version, description: describeApi(config) },
    ...(config.baseUrl ? { servers: [{ url: config.baseUrl }] } : {}),
    ...(auth ? { security: [{ [BEARER_SCHEME]: [] }] } : {}),
    tags,
    paths,
    components: {
      schemas,
      ...(auth
        ? {
            securitySchemes: {
              [BEARER_SCHEME]: {
                type: 'http',
                scheme: 'bearer',
                bearerFormat: 'JWT',
                description: 'The token from POST /auth/login',
              },
            },
          }
        : {}),
    },
  };
}

/**
 * What the docs page shows in auth mode before it has a token: only what needs none (register,
 * login, health) and the Bearer scheme, so that "Authorize" is there. It names no table.
 */
export function buildLoginDocument(config: DocumentConfig, version = '0.0.0'): OpenApiDocument {
  const full = buildOpenApiDocument([], config, version);
  const paths = Object.fromEntries(
    Object.entries(full.paths).filter(([, item]) =>
      Object.values(item).every((op) => Array.isArray((op as JsonSchema).security)),
    ),
  );
  const used = new Set(JSON.stringify(paths).match(/#\/components\/schemas\/[^"]+/g));
  const components = full.components as { schemas: Record<string, JsonSchema> };
  return {
    ...full,
    info: {
      ...(full.info as JsonSchema),
      // Public in auth mode: it names nothing of the database, not even its name.
      title: 'tablegate',
      description:
        'Log in with **POST /auth/login** (Try it out), or paste a token in **Authorize**: the tables of the database appear once the page has a token.',
    },
    tags: [
      { name: 'auth', description: 'Register and log in' },
      { name: 'health', description: 'Service' },
    ],
    paths,
    components: {
      ...components,
      schemas: Object.fromEntries(
        Object.entries(components.schemas).filter(
          ([name]) => used.has(`#/components/schemas/${name}`) || name === 'Error',
        ),
      ),
    },
  };
}
