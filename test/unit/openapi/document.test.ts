/**
 * The OpenAPI document from schema fixtures: valid OpenAPI 3.1 (checked by
 * @seriousme/openapi-schema-validator against the official schema, and every component schema
 * compiled by Ajv's JSON Schema 2020-12), a table with every type described exactly, the
 * operations of tables and views, error codes from the catalogue, and the auth/open differences.
 */
import { describe, expect, test } from '@jest/globals';
import { Validator } from '@seriousme/openapi-schema-validator';
import Ajv2020 from 'ajv/dist/2020.js';
import type { ColumnInfo, TableInfo } from '../../../src/db/schema-types.js';
import { ERRORS } from '../../../src/errors.js';
import {
  buildLoginDocument,
  buildOpenApiDocument,
  type DocumentConfig,
} from '../../../src/http/openapi-document.js';
import { documentView } from '../../../src/policy/document-view.js';
import { validatePolicy } from '../../../src/policy/policy.js';
import { COLUMN_FNS } from '../../../src/query/ast.js';
import { FN_SQL } from '../../../src/sql/compile-filter.js';
import { enumMembers } from '../../../src/types/text-kinds.js';
import {
  balance,
  placeOrder,
  ROUTINES,
  report,
  twinFunction,
  twinProcedure,
  weird,
} from '../fixtures/routines.js';
import { column, order, table, text } from '../fixtures/schema.js';
import { SHOP } from '../fixtures/shop.js';

const config = (mode: 'auth' | 'open'): DocumentConfig => ({
  mode,
  baseUrl: null,
  maxFileSize: 100 * 1024 * 1024,
  maxFiles: 20,
  bodyLimit: 1024 * 1024,
});

const c = (name: string, dataType: string, columnType: string, more: Partial<ColumnInfo>) =>
  column(name, { dataType, columnType, numericPrecision: null, numericScale: null, ...more });

/** One column of every JSON kind and of the string types that get a shape of their own. */
const everyType = table(
  'every_type',
  [
    c('id', 'int', 'int(10) unsigned', {
      kind: 'integer',
      unsigned: true,
      autoIncrement: true,
      hasDefault: true,
    }),
    c('small', 'smallint', 'smallint(6)', { kind: 'integer' }),
    c('big', 'bigint', 'bigint(20)', { kind: 'integer', nullable: true, hasDefault: true }),
    c('big_unsigned', 'bigint', 'bigint(20) unsigned', { kind: 'integer', unsigned: true }),
    c('price', 'decimal', 'decimal(10,2)', { kind: 'decimal' }),
    c('ratio', 'double', 'double', { kind: 'float', nullable: true, hasDefault: true }),
    c('born', 'year', 'year(4)', { kind: 'year' }),
    c('flags', 'bit', 'bit(8)', { kind: 'bit' }),
    c('day', 'date', 'date', { kind: 'date', nullable: true, hasDefault: true }),
    c('at', 'datetime', 'datetime(6)', { kind: 'datetime' }),
    c('stamp', 'timestamp', 'timestamp', { kind: 'datetime', hasDefault: true }),
    c('label', 'varchar', 'varchar(20)', {
      kind: 'string',
      nullable: true,
      hasDefault: true,
      maxLength: 20,
    }),
    c('body', 'text', 'text', { kind: 'string', maxLength: 65535 }),
    c('at_time', 'time', 'time', { kind: 'string' }),
    c('status', 'enum', "enum('new','it''s')", {
      kind: 'string',
      nullable: true,
      hasDefault: true,
    }),
    c('tags', 'set', "set('a','b')", { kind: 'string' }),
    c('data', 'longtext', 'longtext', { kind: 'json', nullable: true, hasDefault: true }),
    c('blob', 'varbinary', 'varbinary(16)', { kind: 'binary', nullable: true, hasDefault: true }),
    c('total', 'decimal', 'decimal(12,2)', { kind: 'decimal', generated: true, hasDefault: true }),
  ],
  ['id'],
);

const view: TableInfo = {
  ...table('order_totals', [
    c('order_id', 'int', 'int(10) unsigned', { kind: 'integer', unsigned: true }),
  ]),
  kind: 'view',
};
const nonAscii = table('größe', [column('id')], ['id']);
const TABLES = [everyType, view, order, nonAscii];

type Doc = ReturnType<typeof buildOpenApiDocument>;
const schemasOf = (doc: Doc) =>
  (doc.components as { schemas: Record<string, Record<string, unknown>> }).schemas;
/**
 * `value` with the shared parameters and responses it refers to put in place (schemas stay
 * references), as a reader of the description sees them.
 */
function resolved(doc: Doc, value: unknown): unknown {
  if (Array.isArray(value)) return value.map((item) => resolved(doc, item));
  if (typeof value !== 'object' || value === null) return value;
  const ref = (value as { $ref?: unknown }).$ref;
  const shared = typeof ref === 'string' && /^#\/components\/(parameters|responses)\//.test(ref);
  if (shared) {
    const [, , section, name] = (ref as string).split('/') as [string, string, string, string];
    const components = doc.components as Record<string, Record<string, unknown>>;
    return resolved(doc, components[section]?.[name]);
  }
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolved(doc, v)]));
}

const operation = (doc: Doc, path: string, method: string) =>
  resolved(doc, (doc.paths[path] as Record<string, Record<string, unknown>>)[method]) as Record<
    string,
    unknown
  >;

describe('the row schema of a table with every type', () => {
  const doc = buildOpenApiDocument([everyType], config('open'));

  test('follows docs/types.md column by column', () => {
    expect(schemasOf(doc).every_type).toEqual({
      type: 'object',
      description: 'A row of table every_type (primary key: id)',
      additionalProperties: false,
      properties: {
        id: {
          type: 'integer',
          minimum: 0,
          maximum: 4294967295,
          description: 'int(10) unsigned; auto-increment',
        },
        small: { type: 'integer', minimum: -32768, maximum: 32767, description: 'smallint(6)' },
        big: {
          type: ['integer', 'string', 'null'],
          pattern: '^-?[0-9]+$',
          description: 'bigint(20); a string beyond ±2^53',
        },
        big_unsigned: {
          type: ['integer', 'string'],
          minimum: 0,
          pattern: '^-?[0-9]+$',
          description: 'bigint(20) unsigned; a string beyond ±2^53',
        },
        price: { type: 'number', description: 'decimal(10,2); exactly the stored digits' },
        ratio: { type: ['number', 'null'], description: 'double' },
        born: { type: 'integer', description: 'year(4)' },
        flags: { type: 'integer', minimum: 0, description: 'bit(8)' },
        day: {
          type: ['string', 'null'],
          format: 'date',
          pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}$',
          description: 'YYYY-MM-DD',
        },
        at: {
          type: 'string',
          pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]{1,6})?$',
          description: 'datetime(6); YYYY-MM-DD HH:MM:SS.ffffff as stored, no time zone',
        },
        stamp: {
          type: 'string',
          pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]{1,6})?$',
          description: 'timestamp; YYYY-MM-DD HH:MM:SS in UTC',
        },
        label: { type: ['string', 'null'], maxLength: 20, description: 'varchar(20)' },
        body: { type: 'string', description: 'text' },
        at_time: {
          type: 'string',
          pattern: '^-?[0-9]{2,3}:[0-9]{2}:[0-9]{2}(\\.[0-9]{1,6})?$',
          description: 'time',
        },
        status: {
          type: ['string', 'null'],
          enum: ['new', "it's", null],
          description: "enum('new','it''s')",
        },
        tags: { type: 'string', description: "set('a','b'); members separated by commas" },
        data: { description: 'JSON: any JSON value' },
        blob: {
          type: ['string', 'null'],
          contentEncoding: 'base64',
          description: 'varbinary(16); base64',
        },
        total: {
          type: 'number',
          readOnly: true,
          description: 'decimal(12,2); exactly the stored digits; generated: read-only',
        },
      },
    });
  });

  test('create requires the columns without a default and leaves generated ones out', () => {
    const insert = schemasOf(doc)['every_type.insert'] as Record<string, unknown>;
    expect(insert.required).toEqual([
      'small',
      'big_unsigned',
      'price',
      'born',
      'flags',
      'at',
      'body',
      'at_time',
      'tags',
    ]);
    expect(Object.keys(insert.properties as object)).not.toContain('total');
    expect(insert).toMatchObject({ minProperties: 1, additionalProperties: false });
    const update = schemasOf(doc)['every_type.update'] as Record<string, unknown>;
    expect(update.required).toBeUndefined();
    expect(update).toMatchObject({ minProperties: 1, additionalProperties: false });
    expect(Object.keys(update.properties as object)).not.toContain('total');
  });

  test('create takes one row or a non-empty array of rows', () => {
    const create = operation(doc, '/table/every_type/create', 'post');
    expect(create.requestBody).toEqual({
      required: true,
      content: {
        'application/json': {
          schema: {
            oneOf: [
              { $ref: '#/components/schemas/every_type.insert' },
              {
                type: 'array',
                minItems: 1,
                maxItems: 10000,
                items: { $ref: '#/components/schemas/every_type.insert' },
              },
            ],
          },
        },
      },
    });
  });
});

describe('validity', () => {
  test.each(['auth', 'open'] as const)('%s mode: valid OpenAPI 3.1', async (mode) => {
    const doc = buildOpenApiDocument(TABLES, config(mode), '1.2.3', undefined, ROUTINES);
    const validator = new Validator();
    const result = await validator.validate(doc);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
    // Every $ref resolves.
    expect(() => validator.resolveRefs()).not.toThrow();
  });

  test('a policy view is valid too: only the granted operations and columns, every $ref resolves', async () => {
    const tables = new Map(TABLES.map((t) => [t.name, t]));
    const policy = validatePolicy(
      {
        roles: {
          clerk: {
            tables: {
              order: { read: { columns: ['id', 'price'] }, update: { columns: ['price'] } },
            },
          },
        },
      },
      tables,
    );
    const doc = buildOpenApiDocument(
      TABLES,
      config('auth'),
      '1.2.3',
      documentView(policy, 'clerk'),
    );
    const validator = new Validator();
    const result = await validator.validate(doc);
    expect(result.errors ?? []).toEqual([]);
    expect(() => validator.resolveRefs()).not.toThrow();
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/table'))).toEqual([
      '/table/order/read',
      '/table/order/read({key},{value})',
      '/table/order/changes',
      '/table/order/update({key},{value})',
      '/table/order/update',
    ]);
    expect(doc.paths['/upload']).toBeUndefined();
    const schemas = (doc.components as { schemas: Record<string, { properties?: object }> })
      .schemas;
    expect(Object.keys(schemas.order?.properties ?? {})).toEqual(['id', 'price']);
  });

  test('the validator does catch a broken document', async () => {
    const doc = buildOpenApiDocument([order], config('open'));
    const result = await new Validator().validate({ ...doc, paths: { 'no-slash': {} } });
    expect(result.valid).toBe(false);
  });

  test('the login document is valid too', async () => {
    const result = await new Validator().validate(buildLoginDocument(config('auth')));
    expect(result.errors ?? []).toEqual([]);
  });

  test('every component schema is valid JSON Schema 2020-12', () => {
    const doc = buildOpenApiDocument(TABLES, config('auth'));
    const ajv = new Ajv2020({ strict: false, validateFormats: false });
    for (const [name, schema] of Object.entries(schemasOf(doc))) ajv.addSchema(schema, name);
    for (const name of Object.keys(schemasOf(doc))) expect(ajv.getSchema(name)).toBeDefined();
  });
});

describe('operations', () => {
  const doc = buildOpenApiDocument(TABLES, config('auth'));

  test('read, create, update and delete for every table and view, names percent-encoded', () => {
    const tablePaths = Object.keys(doc.paths).filter((p) => p.startsWith('/table/'));
    expect(tablePaths).toEqual(
      ['every_type', 'gr%C3%B6%C3%9Fe', 'order', 'order_totals'].flatMap((t) => [
        `/table/${t}/read`,
        // A view has no key to read one row by.
        ...(t === 'order_totals' ? [] : [`/table/${t}/read({key},{value})`]),
        `/table/${t}/changes`,
        `/table/${t}/create`,
        `/table/${t}/update({key},{value})`,
        `/table/${t}/update`,
        `/table/${t}/delete({key},{value})`,
        `/table/${t}/delete`,
      ]),
    );
  });

  test('read takes the seven $ options and may answer X-Total-Count and Link', () => {
    const read = operation(doc, '/table/order/read', 'get');
    const parameters = read.parameters as { name: string; in: string }[];
    expect(parameters.map((p) => `${p.in} ${p.name}`)).toEqual([
      'query $select',
      'query $filter',
      'query $orderby',
      'query $top',
      'query $skip',
      'query $skiptoken',
      'query $count',
      'query $apply',
      'header Accept',
      'header If-None-Match',
    ]);
    const ok = (read.responses as Record<string, Record<string, unknown>>)['200'];
    expect(ok?.headers).toHaveProperty('X-Total-Count');
    expect(ok?.headers).toHaveProperty('Link');
    expect(ok?.content).toEqual({
      'application/json': {
        schema: {
          type: 'array',
          // A row, or with `$apply` a group.
          items: {
            anyOf: [
              { $ref: '#/components/schemas/order' },
              { $ref: '#/components/schemas/ApplyGroup' },
            ],
          },
        },
      },
    });
    // CSV in words: a second media type would make generated clients type the answer a union.
    expect(ok?.description).toContain('With `Accept: text/csv` the same answer comes as CSV');
  });

  test('update and delete take the key column (primary key first) and the value', () => {
    const update = operation(doc, '/table/order/update({key},{value})', 'put');
    const [key, value] = update.parameters as Record<string, unknown>[];
    expect(key).toMatchObject({
      name: 'key',
      in: 'path',
      required: true,
      schema: {
        type: 'string',
        enum: ['id', 'select', 'price', 'note', 'größe', 'we`ird', 'shipped'],
      },
    });
    expect(value).toMatchObject({ name: 'value', in: 'path', required: true });
  });

  test('error responses carry the error body and the codes, with their catalogue status', () => {
    const read = operation(doc, '/table/order/read', 'get');
    const responses = read.responses as Record<string, Record<string, unknown>>;
    expect(Object.keys(responses)).toEqual([
      '200',
      '304',
      '400',
      '401',
      '403',
      '404',
      '429',
      '500',
      '503',
      '504',
    ]);
    const bad = responses['400'] as { description: string; content: unknown };
    expect(bad.description).toContain('FILTER_SYNTAX');
    expect(bad.content).toEqual({
      'application/json': {
        schema: {
          allOf: [
            { $ref: '#/components/schemas/Error' },
            {
              type: 'object',
              properties: {
                code: {
                  anyOf: [
                    {
                      enum: [
                        'INVALID_QUERY',
                        'OPTION_WITHOUT_DOLLAR',
                        'FILTER_SYNTAX',
                        'FILTER_TYPE',
                        'LIMIT_EXCEEDED',
                        'UNKNOWN_COLUMN',
                        'UNKNOWN_RELATION',
                        'APPLY_SYNTAX',
                        'APPLY_TYPE',
                        'BAD_SKIPTOKEN',
                        'ANSWER_TOO_LARGE',
                        'QUERY_TOO_COSTLY',
                        'MALFORMED_URL',
                        'NON_ASCII_URL',
                      ],
                    },
                    { type: 'string', pattern: '^(ER|WARN)_[A-Z0-9_]+$' },
                  ],
                },
              },
            },
          ],
        },
      },
    });
    expect(responses['401']).toMatchObject({
      headers: { 'WWW-Authenticate': expect.anything() },
    });
    const create = operation(doc, '/table/order/create', 'post');
    expect(Object.keys(create.responses as object)).toEqual(
      expect.arrayContaining(['409', '413', '415']),
    );
    expect(schemasOf(doc).Error).toEqual({
      type: 'object',
      required: ['success', 'message', 'code'],
      properties: {
        success: { const: false },
        message: { type: 'string', description: 'A sentence for people' },
        code: { type: 'string', description: 'A stable code for programs' },
      },
    });
  });

  test('every code the server can answer is in the description, under its catalogue status', () => {
    // FORBIDDEN and POLICY_VIOLATION are answered only under a --policy: described with a view.
    const underPolicy = validatePolicy(
      { roles: { admin: { tables: { '*': { read: true, create: true } } } } },
      new Map([[order.name, order]]),
    );
    const text =
      JSON.stringify(
        buildOpenApiDocument([everyType, order], config('auth'), '0', undefined, ROUTINES),
      ) +
      JSON.stringify(
        buildOpenApiDocument([order], config('auth'), '0', documentView(underPolicy, 'admin')),
      );
    for (const code of Object.keys(ERRORS)) {
      expect([code, new RegExp(`\\b${code}\\b`).test(text)]).toEqual([code, true]);
    }
    const full = buildOpenApiDocument([everyType, order], config('auth'), '0', undefined, ROUTINES);
    for (const item of Object.values(full.paths)) {
      for (const op of Object.values(
        resolved(full, item) as Record<string, { responses: object }>,
      )) {
        for (const [status, response] of Object.entries(op.responses)) {
          const codes = JSON.stringify(response).match(/\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b/g) ?? [];
          for (const code of codes.filter((c) => c in ERRORS)) {
            expect([code, ERRORS[code as keyof typeof ERRORS].status]).toEqual([
              code,
              Number(status),
            ]);
          }
        }
      }
    }
  });

  test('upload is multipart with parts named files', () => {
    const upload = operation(doc, '/upload', 'post');
    expect(upload.requestBody).toMatchObject({
      required: true,
      content: {
        'multipart/form-data': {
          schema: {
            required: ['files'],
            properties: {
              files: { type: 'array', items: { type: 'string', format: 'binary' } },
            },
          },
        },
      },
    });
  });
});

describe('stored routines', () => {
  const doc = buildOpenApiDocument([order], config('open'), '1', undefined, ROUTINES);
  const schemaOf = (op: Record<string, unknown>) =>
    (op.requestBody as { content: Record<string, { schema: unknown }> }).content['application/json']
      ?.schema;

  test('a procedure is a POST, a function a GET and a POST; one name, both kinds: POST calls the procedure', () => {
    const rpc = Object.entries(doc.paths)
      .filter(([path]) => path.startsWith('/rpc/'))
      .map(([path, item]) => [path, Object.keys(item)]);
    expect(rpc).toEqual([
      ['/rpc/balance', ['get', 'post']],
      ['/rpc/place_order', ['post']],
      ['/rpc/report', ['post']],
      ['/rpc/twin', ['post', 'get']],
      ['/rpc/we%22ird%60name', ['post']],
    ]);
    expect(operation(doc, '/rpc/twin', 'post').operationId).toBe(
      `call_procedure_${twinProcedure.name}`,
    );
    expect(operation(doc, '/rpc/twin', 'get').operationId).toBe(
      `get_function_${twinFunction.name}`,
    );
    expect(doc.tags).toContainEqual({
      name: 'rpc',
      description: 'Stored procedures and functions',
    });
  });

  test('a procedure: its IN and INOUT parameters required by name, its OUT ones answered', () => {
    const call = operation(doc, '/rpc/place_order', 'post');
    expect(call.description).toMatch(/^Places an order and answers its total\.\n\n/);
    expect(schemaOf(call)).toEqual({
      type: 'object',
      properties: {
        customer: {
          type: ['integer', 'null'],
          minimum: -2147483648,
          maximum: 2147483647,
          description: 'int(11)',
        },
        note: { type: ['string', 'null'], maxLength: 100, description: 'varchar(100)' },
        stock: {
          type: ['integer', 'null'],
          minimum: -2147483648,
          maximum: 2147483647,
          description: 'int(11); INOUT',
        },
      },
      required: ['customer', 'note', 'stock'],
      additionalProperties: false,
    });
    const ok = (
      call.responses as Record<
        string,
        { content: Record<string, { schema: { properties: Record<string, unknown> } }> }
      >
    )[200];
    expect(ok?.content['application/json']?.schema.properties.out).toEqual({
      type: 'object',
      description: 'The OUT and INOUT parameters by name, after the call',
      properties: {
        total: {
          type: ['number', 'null'],
          description: 'decimal(10,2); exactly the stored digits',
        },
        stock: {
          type: ['integer', 'null'],
          minimum: -2147483648,
          maximum: 2147483647,
          description: 'int(11); INOUT',
        },
      },
      required: ['total', 'stock'],
      additionalProperties: false,
    });
    expect(call.requestBody).toMatchObject({ required: true });
    expect(operation(doc, '/rpc/report', 'post').requestBody).toMatchObject({ required: false });
  });

  test('a function: query parameters by name, and its value typed as declared', () => {
    const get = operation(doc, '/rpc/balance', 'get');
    expect(get.parameters).toEqual([
      {
        name: 'customer',
        in: 'query',
        required: true,
        schema: {
          type: 'integer',
          minimum: -2147483648,
          maximum: 2147483647,
          description: 'int(11)',
        },
      },
      {
        name: 'day',
        in: 'query',
        required: true,
        schema: {
          type: 'string',
          format: 'date',
          pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}$',
          description: 'YYYY-MM-DD',
        },
      },
    ]);
    const ok = (
      get.responses as Record<string, { content: Record<string, { schema: unknown }> }>
    )[200];
    expect(ok?.content['application/json']?.schema).toEqual({
      type: 'object',
      required: ['success', 'value'],
      properties: {
        success: { const: true },
        value: {
          type: ['number', 'null'],
          description: 'decimal(10,2); exactly the stored digits',
        },
      },
    });
    const responses = Object.keys(get.responses as object);
    expect(responses).toEqual([
      '200',
      '400',
      '403',
      '404',
      '405',
      '409',
      '429',
      '500',
      '502',
      '503',
      '504',
    ]);
  });

  test('under a policy: only the routines the role may call; none, and the tag is gone', () => {
    const routines = {
      procedures: new Map([placeOrder, report, weird, twinProcedure].map((r) => [r.name, r])),
      functions: new Map([balance, twinFunction].map((r) => [r.name, r])),
    };
    const policy = validatePolicy(
      {
        roles: {
          caller: { routines: { '*': true, report: false } },
          reader: { tables: { order: { read: true } } },
        },
      },
      new Map([[order.name, order]]),
      'policy',
      routines,
    );
    const rpcPaths = (role: string) =>
      Object.keys(
        buildOpenApiDocument([order], config('auth'), '1', documentView(policy, role), ROUTINES)
          .paths,
      ).filter((p) => p.startsWith('/rpc/'));
    expect(rpcPaths('caller')).toEqual([
      '/rpc/balance',
      '/rpc/place_order',
      '/rpc/twin',
      '/rpc/we%22ird%60name',
    ]);
    expect(rpcPaths('reader')).toEqual([]);
    const reader = buildOpenApiDocument(
      [order],
      config('auth'),
      '1',
      documentView(policy, 'reader'),
      ROUTINES,
    );
    expect(reader.tags).not.toContainEqual(expect.objectContaining({ name: 'rpc' }));
  });
});

describe("a caller's view", () => {
  const products = table(
    'products',
    [column('id'), text('name'), column('price'), column('cost_price'), text('supplier_secret')],
    ['id'],
  );
  const labels = table('labels', [column('id'), text('label')], ['id']);
  const tables = new Map([products, labels].map((t) => [t.name, t]));
  const policy = validatePolicy(
    {
      roles: {
        anonymous: { tables: { products: { read: { columns: ['id', 'name', 'price'] } } } },
        support: {
          tables: {
            products: {
              read: { columns: ['id', 'name', 'price'] },
              // May write a column it cannot read: the body names it, keys never do.
              create: { columns: ['name', 'price', 'cost_price'] },
              update: { columns: ['price'] },
              delete: true,
            },
            labels: { read: { columns: ['label'] } },
          },
        },
      },
    },
    tables,
  );
  const docOf = (role: string) =>
    buildOpenApiDocument([products, labels], config('auth'), '1', documentView(policy, role));
  const parameterNames = (doc: Doc, path: string, method: string) =>
    ((operation(doc, path, method).parameters ?? []) as { name: string }[]).map((p) => p.name);
  const keyEnum = (doc: Doc, path: string, method: string) =>
    (
      operation(doc, path, method).parameters as { name: string; schema: { enum?: string[] } }[]
    ).find((p) => p.name === 'key')?.schema.enum;
  const propertiesOf = (doc: Doc, name: string) =>
    Object.keys((schemasOf(doc)[name]?.properties as object | undefined) ?? {});

  test('anonymous: products read with its three columns, nothing of the hidden ones', () => {
    const doc = docOf('anonymous');
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/table'))).toEqual([
      '/table/products/read',
      '/table/products/read({key},{value})',
      '/table/products/changes',
    ]);
    const select = (
      operation(doc, '/table/products/read', 'get').parameters as {
        name: string;
        description: string;
      }[]
    )[0];
    expect(select?.description).toBe(
      'Columns to return, comma-separated (default `*`): id, name, price',
    );
    expect(propertiesOf(doc, 'products')).toEqual(['id', 'name', 'price']);
    expect(Object.keys(schemasOf(doc)).sort()).toEqual([
      'Apply',
      'ApplyGroup',
      'Credentials',
      'Error',
      'Health',
      'Index',
      'LoginResult',
      'Me',
      'PasswordChange',
      'PasswordChanged',
      'RegisterResult',
      'products',
    ]);
    expect(JSON.stringify(doc)).not.toMatch(/cost_price|supplier_secret|labels/);
  });

  test('$apply names the columns its aggregates may take, of those the role may read', () => {
    const applyOf = (doc: Doc) =>
      (
        operation(doc, '/table/products/read', 'get').parameters as {
          name: string;
          description: string;
        }[]
      ).find((p) => p.name === '$apply')?.description;
    expect(applyOf(docOf('anonymous'))).toContain(
      'sum and average: id, price; min and max: id, name, price.',
    );
    const whole = buildOpenApiDocument([products, labels], config('auth'));
    expect(applyOf(whole)).toContain(
      'sum and average: id, price, cost_price; min and max: id, name, price, cost_price, supplier_secret.',
    );
  });

  test('without a token, routes that need one whatever the policy says are left out', () => {
    const view = { ...documentView(policy, 'anonymous'), signedIn: false };
    const doc = buildOpenApiDocument([products, labels], config('auth'), '1', view);
    expect(Object.keys(doc.paths)).toEqual([
      '/auth/register',
      '/auth/login',
      '/table/products/read',
      '/table/products/read({key},{value})',
      '/table/products/changes',
      // anonymous is granted a table: its agents may use MCP without a token too.
      '/mcp',
      // The OData service is offered where MCP is (a role granted anything).
      '/odata',
      '/odata/$metadata',
      '/odata/{resource}',
      '/odata/$batch',
      '/live',
      '/health',
      '/openapi.json',
    ]);
    expect(schemasOf(doc)).not.toHaveProperty('Index');
    // In open mode there are no tokens: the index is everyone's.
    const open = buildOpenApiDocument([products], config('open'), '1', view);
    expect(open.paths).toHaveProperty(['/']);
  });

  test("OData's entity writes take If-Match and may answer 412; its reads carry an ETag and may answer 304", () => {
    const doc = docOf('support');
    for (const method of ['patch', 'put', 'delete']) {
      const write = operation(doc, '/odata/{resource}', method);
      expect(parameterNames(doc, '/odata/{resource}', method)).toEqual(['resource', 'If-Match']);
      expect((write.parameters as Record<string, unknown>[])[1]).toMatchObject({
        in: 'header',
        required: false,
      });
      const responses = write.responses as Record<string, { description: string }>;
      expect(responses['412']?.description).toContain('PRECONDITION_FAILED');
    }
    const read = operation(doc, '/odata/{resource}', 'get');
    const readResponses = read.responses as Record<string, { headers?: Record<string, unknown> }>;
    expect(Object.keys(readResponses['200']?.headers ?? {})).toEqual(['ETag']);
    expect(Object.keys(readResponses['304']?.headers ?? {})).toEqual(['ETag']);
    expect(parameterNames(doc, '/odata/{resource}', 'get')).toEqual(['resource', 'If-None-Match']);
    for (const [path, method] of [
      ['/odata/{resource}', 'post'],
      ['/odata/{resource}', 'get'],
      ['/odata/$batch', 'post'],
    ] as const) {
      expect(parameterNames(doc, path, method)).not.toContain('If-Match');
      expect(Object.keys(operation(doc, path, method).responses as object)).not.toContain('412');
    }
  });

  test('support: bodies of the columns it may write, keys among those it may read', () => {
    const doc = docOf('support');
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/table'))).toEqual([
      '/table/labels/read',
      '/table/labels/changes',
      '/table/products/read',
      '/table/products/read({key},{value})',
      '/table/products/changes',
      '/table/products/create',
      '/table/products/update({key},{value})',
      '/table/products/update',
      '/table/products/delete({key},{value})',
      '/table/products/delete',
    ]);
    expect(keyEnum(doc, '/table/products/update({key},{value})', 'put')).toEqual([
      'id',
      'name',
      'price',
    ]);
    expect(keyEnum(doc, '/table/products/delete({key},{value})', 'delete')).toEqual([
      'id',
      'name',
      'price',
    ]);
    expect(parameterNames(doc, '/table/products/update({key},{value})', 'put')).toEqual([
      'key',
      'value',
      'Prefer',
      'If-Match',
    ]);
    expect(propertiesOf(doc, 'products')).toEqual(['id', 'name', 'price']);
    expect(propertiesOf(doc, 'products.insert')).toEqual(['name', 'price', 'cost_price']);
    expect(propertiesOf(doc, 'products.update')).toEqual(['price']);
    expect(JSON.stringify(doc)).not.toContain('supplier_secret');
    // The one hidden column it may write appears in the create body only.
    const text = JSON.stringify({
      ...doc,
      components: { ...(doc.components as object), schemas: {} },
    });
    expect(text).not.toContain('cost_price');
  });

  test('a primary key the caller cannot read is not named', () => {
    const doc = docOf('support');
    expect(schemasOf(doc).labels?.description).toBe('A row of table labels');
    expect(schemasOf(doc).products?.description).toBe('A row of table products (primary key: id)');
  });

  test('no description names the database', () => {
    for (const doc of [
      docOf('anonymous'),
      buildOpenApiDocument(TABLES, config('open')),
      buildLoginDocument(config('auth')),
    ]) {
      expect((doc.info as { title: string }).title).toBe('tablegate');
    }
  });
});

describe('size: what every table shares is written once', () => {
  const tablesOf = (n: number) =>
    Array.from({ length: n }, (_, i) => ({ ...order, name: `t${i}` }) as TableInfo);
  const size = (n: number) =>
    JSON.stringify(buildOpenApiDocument(tablesOf(n), config('auth'))).length;

  test('the read options, key value and error responses are shared components', () => {
    const doc = buildOpenApiDocument(tablesOf(20), config('auth'));
    const text = JSON.stringify(doc);
    expect(text.split('A condition on the columns').length - 1).toBe(1);
    const components = doc.components as Record<string, Record<string, unknown>>;
    expect(Object.keys(components.parameters ?? {})).toEqual([
      'filter',
      'orderby',
      'top',
      'skip',
      'skiptoken',
      'count',
      'accept',
      'if-none-match',
      'prefer-create',
      'key-value',
      'prefer-update',
      'if-match',
      'write-filter',
      'prefer-delete',
    ]);
    expect(Object.keys(components.responses ?? {})).toContain('read.400');
    // Once per kind of operation that reads a $filter (read, read by key, update and delete by
    // filter, the change feed), whatever the number of tables.
    expect(text.split('"FILTER_SYNTAX"').length - 1).toBe(5);
  });

  // Each operation repeating its parameters and error responses, a table added 20 KB.
  test('a table adds about 14 KB for seven columns, all eight operations and three schemas', () => {
    const perTable = (size(40) - size(20)) / 20;
    expect(perTable).toBeGreaterThan(9000);
    expect(perTable).toBeLessThan(16000);
  });
});

test('the filter help names every filter function with the MySQL function it runs', () => {
  const doc = buildOpenApiDocument([order], config('open'));
  const filter = (doc.components as { parameters: Record<string, { description: string }> })
    .parameters.filter;
  for (const fn of COLUMN_FNS) expect(filter?.description).toContain(`\`${fn}\` (${FN_SQL[fn]})`);
  expect(filter?.description).toContain(
    '`year` (YEAR), `month` (MONTH), `day` (DAYOFMONTH), `date` (DATE) take a DATE, DATETIME or TIMESTAMP column',
  );
});

describe('auth mode and open mode', () => {
  test('auth: the Bearer scheme for everything but register, login and health', () => {
    const doc = buildOpenApiDocument(TABLES, config('auth'));
    expect(doc.security).toEqual([{ bearerAuth: [] }]);
    expect(doc.components).toMatchObject({
      securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
    });
    for (const [path, method] of [
      ['/auth/register', 'post'],
      ['/auth/login', 'post'],
      ['/health', 'get'],
    ] as const) {
      expect(operation(doc, path, method).security).toEqual([]);
    }
    expect(operation(doc, '/openapi.json', 'get').security).toBeUndefined();
    expect(operation(doc, '/openapi.json', 'get').responses).toHaveProperty('401');
  });

  test('open: no scheme, no /auth paths, no 401', () => {
    const doc = buildOpenApiDocument(TABLES, config('open'));
    expect(doc.security).toBeUndefined();
    expect(doc.components).not.toHaveProperty('securitySchemes');
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/auth'))).toEqual([]);
    expect(JSON.stringify(doc)).not.toContain('"ACCESS_DENIED"');
  });

  test("open: every operation, every routine's too, says it needs nothing (security: [])", () => {
    const doc = buildOpenApiDocument(TABLES, config('open'), '1', undefined, ROUTINES);
    const unsecured = Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.entries(item as Record<string, { security?: unknown }>)
        .filter(([, op]) => JSON.stringify(op.security) !== '[]')
        .map(([method]) => `${method} ${path}`),
    );
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/rpc/')).length).toBeGreaterThan(0);
    expect(unsecured).toEqual([]);
  });

  test('the login document names no table', () => {
    const doc = buildLoginDocument(config('auth'));
    expect(Object.keys(doc.paths)).toEqual(['/auth/register', '/auth/login', '/live', '/health']);
    expect(Object.keys(schemasOf(doc)).sort()).toEqual([
      'Credentials',
      'Error',
      'Health',
      'LoginResult',
      'RegisterResult',
    ]);
    expect(doc.components).toHaveProperty('securitySchemes.bearerAuth');
  });

  test('--base-url becomes the server', () => {
    const doc = buildOpenApiDocument([], { ...config('open'), baseUrl: 'https://api.example.com' });
    expect(doc.servers).toEqual([{ url: 'https://api.example.com' }]);
  });
});

test('enum members: quotes doubled inside', () => {
  expect(enumMembers("enum('a','it''s','')")).toEqual(['a', "it's", '']);
  expect(enumMembers("set('x,y','z')")).toEqual(['x,y', 'z']);
});

describe('relations (docs/relations.md)', () => {
  const doc = buildOpenApiDocument(SHOP, config('open'));

  test('each read lists its table’s relations in x-relations: kind, target, key columns', () => {
    const relationsOf = (name: string) =>
      operation(doc, `/table/${name}/read`, 'get')['x-relations'];
    expect(relationsOf('customers')).toEqual({
      billing_address: {
        kind: 'to-one',
        target: 'addresses',
        columns: { billing_address_id: 'id' },
      },
      shipping_address: {
        kind: 'to-one',
        target: 'addresses',
        columns: { shipping_address_id: 'id' },
      },
      orders: { kind: 'to-many', target: 'orders', columns: { id: 'customer_id' } },
    });
    expect(relationsOf('shipments')).toEqual({
      order_items: {
        kind: 'to-one',
        target: 'order_items',
        columns: { order_id: 'order_id', line: 'line' },
      },
    });
    expect(relationsOf('employees')).toEqual({
      manager: { kind: 'to-one', target: 'employees', columns: { manager_id: 'id' } },
      employees: { kind: 'to-many', target: 'employees', columns: { id: 'manager_id' } },
    });
  });

  test('$expand: its syntax, limits and the relations, after the shared options', () => {
    const read = operation(doc, '/table/orders/read', 'get');
    const parameters = read.parameters as { name: string; description: string }[];
    expect(parameters.map((p) => p.name)).toEqual([
      '$select',
      '$filter',
      '$orderby',
      '$top',
      '$skip',
      '$skiptoken',
      '$count',
      '$apply',
      '$expand',
      'Accept',
      'If-None-Match',
    ]);
    const expand = parameters.find((p) => p.name === '$expand')?.description ?? '';
    expect(expand).toContain(
      'Relations here: `customer` (to-one → customers), `order_items` (to-many → order_items).',
    );
    expect(expand).toContain('`$select`, `$filter`, `$orderby`,');
    expect(expand).toContain('Limits: 3 levels, 10 relations per request');
    expect(expand).toContain('E.g. `order_items($select=…;$top=3)`');
    const filter = (doc.components as { parameters: Record<string, { description: string }> })
      .parameters.filter;
    expect(filter?.description).toContain("`customer/country eq 'Japan'`");
    expect(filter?.description).toContain('`order_items/any(i: i/qty gt 5)`');
  });

  test('a table without relations has no $expand and no x-relations', () => {
    const plain = buildOpenApiDocument([order], config('open'));
    const read = operation(plain, '/table/order/read', 'get');
    expect((read.parameters as { name: string }[]).map((p) => p.name)).not.toContain('$expand');
    expect(read).not.toHaveProperty('x-relations');
  });

  test('the row schema has a key per relation: the related row or null, or an array of rows', () => {
    const orders = schemasOf(doc).orders as { properties: Record<string, unknown> };
    expect(Object.keys(orders.properties)).toEqual([
      'id',
      'customer_id',
      'note',
      'customer',
      'order_items',
    ]);
    expect(orders.properties.customer).toEqual({
      description: 'With `$expand=customer`: the row of customers (customer_id → id), or null',
      anyOf: [{ $ref: '#/components/schemas/customers' }, { type: 'null' }],
    });
    expect(orders.properties.order_items).toEqual({
      description: 'With `$expand=order_items`: the rows of order_items (id → order_id)',
      type: 'array',
      items: { $ref: '#/components/schemas/order_items' },
    });
  });

  test('valid OpenAPI 3.1 and JSON Schema, every $ref resolves (rows refer to each other)', async () => {
    const validator = new Validator();
    // resolveRefs puts the referred objects in place: on a copy, as rows refer to each other.
    const result = await validator.validate(structuredClone(doc));
    expect(result.errors ?? []).toEqual([]);
    expect(() => validator.resolveRefs()).not.toThrow();
    // The components as one schema document, so that `#/components/schemas/…` resolves.
    const ajv = new Ajv2020({ strict: false, validateFormats: false });
    ajv.addSchema({ $id: 'https://tablegate.test/openapi', components: doc.components });
    // An expanded answer is a valid row.
    const validate = ajv.getSchema('https://tablegate.test/openapi#/components/schemas/orders');
    expect(
      validate?.({
        id: 10,
        customer_id: 1,
        note: null,
        customer: {
          id: 1,
          name: 'Ann',
          country: null,
          billing_address_id: 2,
          shipping_address_id: null,
        },
        order_items: [{ order_id: 10, line: 1, product: 'tea', qty: 2 }],
      }),
    ).toBe(true);
    expect(validate?.({ id: 10, customer: 'Ann' })).toBe(false);
  });

  test('a caller sees only the relations it may follow: target readable, key columns readable', async () => {
    const policy = validatePolicy(
      {
        roles: {
          clerk: {
            tables: {
              orders: { read: true },
              // customer_id hidden: orders.customer cannot pair rows for this role.
              customers: { read: { columns: ['id', 'name'] } },
              order_items: { read: true },
              // products and addresses are not readable.
            },
          },
        },
      },
      new Map(SHOP.map((t) => [t.name, t])),
    );
    const view = buildOpenApiDocument(SHOP, config('auth'), '1', documentView(policy, 'clerk'));
    const relationsOf = (name: string) =>
      Object.keys(
        (operation(view, `/table/${name}/read`, 'get')['x-relations'] as object | undefined) ?? {},
      );
    expect(relationsOf('orders')).toEqual(['customer', 'order_items']);
    // customers.billing_address: addresses unreadable; customers.orders: the key is readable
    // on both sides (customers.id, orders.customer_id).
    expect(relationsOf('customers')).toEqual(['orders']);
    // order_items.products: products unreadable; shipments unreadable.
    expect(relationsOf('order_items')).toEqual(['order']);
    const schemas = (view.components as { schemas: Record<string, { properties: object }> })
      .schemas;
    expect(Object.keys(schemas.order_items?.properties ?? {})).toEqual([
      'order_id',
      'line',
      'product',
      'qty',
      'order',
    ]);
    const result = await new Validator().validate(view);
    expect(result.errors ?? []).toEqual([]);
  });
});
