/**
 * The policy pieces with strings and a schema fixture: the where ($filter + @user parameters),
 * validation against the tables, and the stage between plan and compile, checked through the
 * exact SQL and parameters the compiler makes of the guarded plan.
 */
import { describe, expect, test } from '@jest/globals';
import type { TableInfo } from '../../../src/db/schema-types.js';
import { planRead } from '../../../src/plan/read-plan.js';
import { planDelete, planInsert, planUpdate } from '../../../src/plan/write-plan.js';
import {
  type Policy,
  PolicyError,
  parsePolicyText,
  validatePolicy,
} from '../../../src/policy/policy.js';
import { type Access, guardDelete, guardInsert, guardUpdate } from '../../../src/policy/stage.js';
import { baseTable, readView, viewerFor, writeView } from '../../../src/policy/views.js';
import { parseWhere } from '../../../src/policy/where.js';
import { parseReadOptions } from '../../../src/query/options.js';
import { compileCount, compileSelect } from '../../../src/sql/compile-read.js';
import {
  compileDelete,
  compileInsertGuard,
  compileUpdate,
  compileUpdateGuard,
} from '../../../src/sql/compile-write.js';
import type { CompiledQuery } from '../../../src/sql/compiled-query.js';
import { bindUser } from '../../../src/sql/user-values.js';
import { balance, placeOrder } from '../fixtures/routines.js';
import { column, table } from '../fixtures/schema.js';

const text = (name: string) =>
  column(name, { dataType: 'varchar', columnType: 'varchar(20)', kind: 'string', maxLength: 20 });
const orders = table(
  'orders',
  [
    column('id', { autoIncrement: true, hasDefault: true }),
    column('customer_id', {
      dataType: 'bigint',
      columnType: 'bigint(20) unsigned',
      unsigned: true,
    }),
    text('status'),
    text('note'),
  ],
  ['id'],
);
const secrets = table('secrets', [column('id'), text('v')], ['id']);
const SCHEMA: ReadonlyMap<string, TableInfo> = new Map([
  ['orders', orders],
  ['secrets', secrets],
]);

const SHOP = {
  roles: {
    anonymous: { tables: { orders: { read: { columns: ['id', 'status'] } } } },
    user: {
      tables: {
        orders: {
          read: { where: 'customer_id eq @user.id' },
          create: { where: 'customer_id eq @user.id', columns: ['customer_id', 'note'] },
          update: { where: "customer_id eq @user.id and status eq 'open'", columns: ['note'] },
          delete: false,
        },
      },
    },
    clerk: { tables: { orders: { read: true, update: { where: 'customer_id eq @user.id' } } } },
    admin: { tables: { '*': { read: true, delete: true }, secrets: { delete: false } } },
  },
};

const policy: Policy = validatePolicy(SHOP, SCHEMA);
const as = (role: string, id = '7'): Access => ({
  policy,
  role,
  user: role === 'anonymous' ? null : { id, email: `${role}@x.org`, role },
});
/** The read of `query` as `access` sees it. */
const read = (query: Record<string, string>, access: Access | null = null, t: TableInfo = orders) =>
  planRead(parseReadOptions(query), t, viewerFor(access));
/** A statement with the caller's @user values in place, as it runs. */
const bound = (query: CompiledQuery, access: Access) => bindUser(query, access.user);
/** Each statement of a check, as it runs. */
const boundAll = (queries: readonly CompiledQuery[] | null | undefined, access: Access) =>
  queries?.map((query) => bound(query, access));
/** `customer_id eq @user.id`: an index lookup, and the column's text byte for byte. */
const OWN = '(`customer_id` = ? AND CAST(`customer_id` AS CHAR) = CAST(? AS BINARY))';

describe('where', () => {
  test('@user.… become parameters, outside strings only', () => {
    const where = parseWhere(
      "note eq '@user.id' and customer_id eq @user.id or status in (@user.role, 'x')",
    );
    expect(where.usesUser).toBe(true);
    expect([...where.columns].sort()).toEqual(['customer_id', 'note', 'status']);
    expect(where.expr).toEqual({
      kind: 'or',
      items: [
        {
          kind: 'and',
          items: [
            expect.objectContaining({
              left: expect.anything(),
              right: { kind: 'string', value: '@user.id' },
            }),
            expect.objectContaining({ right: { kind: 'user', field: 'id' } }),
          ],
        },
        expect.objectContaining({
          kind: 'in',
          values: [
            { kind: 'user', field: 'role' },
            { kind: 'string', value: 'x' },
          ],
        }),
      ],
    });
  });

  test.each([
    ['customer_id eq @user.name', "unknown parameter '@user.name' at position 16"],
    ['customer_id eq @me', "unknown parameter '@me' at position 16"],
    [
      'customer_id eq',
      'invalid where at position 15: expected a column or a value, found end of filter',
    ],
  ])('%j is refused: %s', (where, message) => {
    expect(() => parseWhere(where)).toThrow(message);
  });
});

describe('validatePolicy', () => {
  test('YAML and JSON text', () => {
    expect(parsePolicyText('roles:\n  a: {}\n', 'p.yaml')).toEqual({ roles: { a: {} } });
    expect(() => parsePolicyText('{', 'p.json')).toThrow(PolicyError);
  });

  test.each<[unknown, string]>([
    [
      { roles: { user: { tables: { orders: { read: 'yes' } } } } },
      "roles.user.tables.orders.read must be true, false or an object with 'where' and/or 'columns'",
    ],
    [
      { roles: { user: { tables: { orders: { delete: { columns: ['id'] } } } } } },
      'roles.user.tables.orders.delete.columns: delete takes no columns (it removes whole rows)',
    ],
    [
      { roles: { user: { tables: { '*': { read: { columns: ['note'] } } } } } },
      "roles.user.tables.*.read.columns: column 'note' does not exist in table 'secrets'",
    ],
    // A name within two edits of one the schema has gets a "did you mean".
    [
      { roles: { user: { tables: { order: { read: true } } } } },
      "roles.user.tables.order: table 'order' does not exist: did you mean 'orders'?",
    ],
    [
      { roles: { user: { tables: { orders: { update: { columns: ['note', 'stauts'] } } } } } },
      "roles.user.tables.orders.update.columns: column 'stauts' does not exist in table 'orders': did you mean 'status'?",
    ],
    [
      { roles: { user: { tables: { zebra: { read: true } } } } },
      "roles.user.tables.zebra: table 'zebra' does not exist",
    ],
    [
      { roles: { user: { tables: { users_created_by_tablegate: { read: true } } } } },
      "roles.user.tables.users_created_by_tablegate: table 'users_created_by_tablegate' does not exist",
    ],
    // A quoted string that is no number meets a number column: refused at start, as in $filter.
    [
      { roles: { user: { tables: { orders: { read: { where: "customer_id eq 'abc'" } } } } } },
      "roles.user.tables.orders.read.where: Invalid $filter at position 13: the string 'abc' cannot be compared with column 'customer_id' (bigint), which is a number: it is not a number",
    ],
  ])('%j → %s', (document, message) => {
    expect(() => validatePolicy(document, SCHEMA)).toThrow(new PolicyError(message));
  });

  test.each<[unknown, string]>([
    [
      { roles: { user: { routines: { no_such: true } } } },
      "roles.user.routines.no_such: routine 'no_such' does not exist",
    ],
    [
      { roles: { user: { routines: { place_ordr: true } } } },
      "roles.user.routines.place_ordr: routine 'place_ordr' does not exist: did you mean 'place_order'?",
    ],
    [
      { roles: { user: { routines: { balanse: true } } } },
      "roles.user.routines.balanse: routine 'balanse' does not exist: did you mean 'balance'?",
    ],
    [
      { roles: { user: { routines: { place_order: 'yes' } } } },
      'roles.user.routines.place_order must be true or false',
    ],
    [
      { roles: { user: { routines: { place_order: { call: true } } } } },
      'roles.user.routines.place_order must be true or false',
    ],
    [{ roles: { user: { routines: ['place_order'] } } }, 'roles.user.routines must be an object'],
    [
      { roles: { user: { procedures: { place_order: true } } } },
      "roles.user: unknown role key 'procedures' (expected 'tables', 'files', 'routines')",
    ],
  ])('routines: %j → %s', (document, message) => {
    const routines = {
      procedures: new Map([[placeOrder.name, placeOrder]]),
      functions: new Map([[balance.name, balance]]),
    };
    expect(() => validatePolicy(document, SCHEMA, 'policy', routines)).toThrow(
      new PolicyError(message),
    );
  });

  test('a routine named in a policy must exist when the gateway starts', () => {
    const document = { roles: { user: { routines: { place_order: true, '*': false } } } };
    expect(() => validatePolicy(document, SCHEMA)).toThrow(
      new PolicyError("roles.user.routines.place_order: routine 'place_order' does not exist"),
    );
    const routines = { procedures: new Map([[placeOrder.name, placeOrder]]), functions: new Map() };
    const granted = validatePolicy(document, SCHEMA, 'policy', routines);
    expect(granted.decide('user', { kind: 'routine', routine: 'place_order' })).toEqual({
      allowed: true,
      grant: null,
    });
    expect(granted.decide('user', { kind: 'routine', routine: 'other' })).toEqual({
      allowed: false,
      refusal: 'unknown-routine',
    });
    expect(granted.decide('nobody', { kind: 'routine', routine: 'place_order' })).toEqual({
      allowed: false,
      refusal: 'unknown-routine',
    });
  });

  test('a named table overrides * for the actions it names; the users table never', () => {
    expect(policy.grant('admin', 'orders', 'delete')).not.toBeNull();
    expect(policy.grant('admin', 'secrets', 'delete')).toBeNull();
    expect(policy.grant('admin', 'secrets', 'read')).not.toBeNull();
    expect(policy.grant('admin', 'users_created_by_tablegate', 'read')).toBeNull();
    expect(policy.grant('nobody', 'orders', 'read')).toBeNull();
  });
});

describe('the stage between plan and compile', () => {
  test('a read ANDs the where after the caller’s filter, as bound parameters, $count too', () => {
    const plan = read(
      { $filter: 'customer_id eq 8 or 1 eq 1', $top: '5', $count: 'true' },
      as('user'),
    );
    expect(bound(compileSelect(plan), as('user'))).toEqual({
      sql: `SELECT \`id\`, \`customer_id\`, \`status\`, \`note\` FROM \`orders\` WHERE ((\`customer_id\` = ? OR ? = ?) AND ${OWN}) ORDER BY \`id\` ASC LIMIT ?`,
      params: [8, 1, 1, '7', '7', '5'],
    });
    expect(bound(compileCount(plan), as('user'))).toEqual({
      sql: `SELECT COUNT(*) FROM \`orders\` WHERE ((\`customer_id\` = ? OR ? = ?) AND ${OWN})`,
      params: [8, 1, 1, '7', '7'],
    });
  });

  test('hidden columns: * is the granted ones; naming another anywhere is UNKNOWN_COLUMN', () => {
    expect(compileSelect(read({}, as('anonymous'))).sql).toBe(
      'SELECT `id`, `status` FROM `orders`',
    );
    const queries: Record<string, string>[] = [
      { $select: 'note' },
      { $filter: 'note eq null' },
      { $orderby: 'customer_id' },
    ];
    for (const query of queries) {
      expect(() => read(query, as('anonymous'))).toThrow(
        expect.objectContaining({ status: 400, code: 'UNKNOWN_COLUMN' }),
      );
    }
  });

  test('no policy: every column and row', () => {
    expect(compileSelect(read({ $filter: 'id eq 1' }))).toEqual({
      sql: 'SELECT `id`, `customer_id`, `status`, `note` FROM `orders` WHERE `id` = ?',
      params: [1],
    });
  });

  test('update and delete: the where is ANDed to the key', () => {
    const update = guardUpdate(
      as('user'),
      planUpdate(
        orders,
        { key: 'id', value: { kind: 'number', text: '3' }, bare: '3' },
        { note: 'x' },
      ),
    );
    expect(bound(compileUpdate(update), as('user'))).toEqual({
      sql: `UPDATE \`orders\` SET \`note\` = ? WHERE \`id\` = ? AND (${OWN} AND \`status\` = ?)`,
      params: ['x', 3, '7', '7', 'open'],
    });
    const policyWithDelete = validatePolicy(
      {
        roles: {
          c: { tables: { orders: { read: true, delete: { where: 'customer_id eq @user.id' } } } },
        },
      },
      SCHEMA,
    );
    const access: Access = {
      policy: policyWithDelete,
      role: 'c',
      user: { id: '7', email: 'c@x.org', role: 'c' },
    };
    const deleted = guardDelete(
      access,
      planDelete(orders, { key: 'id', value: { kind: 'number', text: '3' }, bare: '3' }),
    );
    expect(bound(compileDelete(deleted), access)).toEqual({
      sql: `DELETE FROM \`orders\` WHERE \`id\` = ? AND ${OWN}`,
      params: [3, '7', '7'],
    });
  });

  const key = { key: 'id', value: { kind: 'number', text: '1' }, bare: '1' } as const;

  test.each<[string, Record<string, unknown>, string | null]>([
    ['user', { note: 'x' }, null],
    ['user', { status: 'closed' }, 'FORBIDDEN'],
    ['clerk', { note: 'x', status: 'closed' }, null],
    ['clerk', { customer_id: 7 }, null],
    ['clerk', { customer_id: '7' }, null],
    ['clerk', { customer_id: 8 }, 'POLICY_VIOLATION'],
    ['clerk', { customer_id: null }, 'POLICY_VIOLATION'],
  ])('update as %s setting %j → %s', (role, body, code) => {
    const run = () => guardUpdate(as(role), planUpdate(orders, key, body));
    if (code === null) expect(run).not.toThrow();
    else expect(run).toThrow(expect.objectContaining({ status: 403, code }));
  });

  test.each<[unknown, string | null]>([
    [{ customer_id: 7, note: 'a' }, null],
    [{ customer_id: '7' }, null],
    [[{ customer_id: 7 }, { customer_id: 8 }], 'POLICY_VIOLATION'],
    [{ note: 'no customer' }, 'POLICY_VIOLATION'],
    [[{ customer_id: 7 }, { note: 'default customer' }], 'POLICY_VIOLATION'],
    [{ customer_id: 7, status: 'open' }, 'FORBIDDEN'],
  ])('create %j → %s', (body, code) => {
    const run = () => guardInsert(as('user'), planInsert(orders, body));
    if (code === null) expect(run).not.toThrow();
    else expect(run).toThrow(expect.objectContaining({ status: 403, code }));
  });

  test.each<[string, () => unknown, string]>([
    [
      'a create',
      () => guardInsert(as('user'), planInsert(orders, { customer_id: 7, status: 'open' })),
      "Forbidden: this role's policy for create on 'orders' does not let it write column 'status'",
    ],
    [
      'an update',
      () => guardUpdate(as('user'), planUpdate(orders, key, { status: 'x', note: 'x', id: 2 })),
      "Forbidden: this role's policy for update on 'orders' does not let it write columns 'status', 'id'",
    ],
  ])('%s naming columns the role may not write: 403 FORBIDDEN naming them', (_, run, message) => {
    expect(run).toThrow(expect.objectContaining({ status: 403, code: 'FORBIDDEN', message }));
  });

  test('an action the role may not do stays the bare Forbidden', () => {
    const run = () =>
      guardDelete(
        as('user'),
        planDelete(orders, { key: 'id', value: { kind: 'number', text: '3' }, bare: '3' }),
      );
    expect(run).toThrow(
      expect.objectContaining({ status: 403, code: 'FORBIDDEN', message: 'Forbidden' }),
    );
  });
});

describe('an update checked after it runs', () => {
  const checked: TableInfo = { ...orders, name: 'checked', hasTriggers: false };
  const triggered: TableInfo = { ...orders, name: 'triggered', hasTriggers: true };
  const keyless: TableInfo = { ...orders, name: 'keyless', hasTriggers: false, primaryKey: [] };
  const rules = validatePolicy(
    {
      roles: {
        e: {
          tables: {
            '*': { read: true, update: { where: "customer_id eq @user.id and note ne 'locked'" } },
          },
        },
      },
    },
    new Map([
      ['checked', checked],
      ['triggered', triggered],
      ['keyless', keyless],
    ]),
  );
  const access: Access = {
    policy: rules,
    role: 'e',
    user: { id: '7', email: 'e@x.org', role: 'e' },
  };
  const key = { key: 'id', value: { kind: 'number', text: '3' }, bare: '3' } as const;
  const outcome = (matched: number, found: unknown[][] = []) => ({
    found,
    results: [{ affectedRows: matched, insertId: null }],
  });

  test('by the primary key of update(id,…): the row at that key, when the UPDATE matched it', () => {
    const plan = guardUpdate(access, planUpdate(checked, key, { note: 'x', status: 's' }));
    expect(bound(compileUpdate(plan), access)).toEqual({
      sql: 'UPDATE `checked` SET `note` = ?, `status` = ? WHERE `id` = ? AND ((`customer_id` = ? AND CAST(`customer_id` AS CHAR) = CAST(? AS BINARY)) AND `note` <> ?)',
      params: ['x', 's', 3, '7', '7', 'locked'],
    });
    const guard = compileUpdateGuard(plan);
    expect(guard?.lookup).toBeNull();
    // Never the values sent: the row is found by its key, the where read from what is stored.
    expect(boundAll(guard?.queries(outcome(1)), access)).toEqual([
      {
        sql: 'SELECT COUNT(*) FROM `checked` WHERE `id` = ? HAVING COUNT(*) <> ? OR SUM((((`customer_id` = ? AND CAST(`customer_id` AS CHAR) = CAST(? AS BINARY)) AND `note` <> ?)) IS NOT TRUE) > 0',
        params: [3, 1, '7', '7', 'locked'],
      },
    ]);
    expect(guard?.queries(outcome(0))).toEqual([]);
  });

  test('by another key: the primary keys locked just before, confirmed by the matched count', () => {
    const byNote = { key: 'note', value: { kind: 'string', value: 'draft' }, bare: null } as const;
    const plan = guardUpdate(access, planUpdate(checked, byNote, { note: 'x' }));
    const guard = compileUpdateGuard(plan, 7);
    expect(guard?.lookup && bound(guard.lookup, access)).toEqual({
      sql: 'SELECT `id` FROM `checked` WHERE `note` = ? AND ((`customer_id` = ? AND CAST(`customer_id` AS CHAR) = CAST(? AS BINARY)) AND `note` <> ?) FOR UPDATE',
      params: ['draft', '7', '7', 'locked'],
    });
    // 7 placeholders: 3 for the where, 1 for the count, so 3 keys per SELECT.
    expect(
      boundAll(guard?.queries(outcome(4, [[10], ['11'], [12], ['9007199254740993']])), access),
    ).toEqual([
      {
        sql: 'SELECT COUNT(*) FROM `checked` WHERE `id` IN (?, ?, ?) HAVING COUNT(*) <> ? OR SUM((((`customer_id` = ? AND CAST(`customer_id` AS CHAR) = CAST(? AS BINARY)) AND `note` <> ?)) IS NOT TRUE) > 0',
        params: [10, 11, 12, 3, '7', '7', 'locked'],
      },
      {
        sql: 'SELECT COUNT(*) FROM `checked` WHERE `id` IN (CAST(? AS DECIMAL(65,30))) HAVING COUNT(*) <> ? OR SUM((((`customer_id` = ? AND CAST(`customer_id` AS CHAR) = CAST(? AS BINARY)) AND `note` <> ?)) IS NOT TRUE) > 0',
        params: ['9007199254740993', 1, '7', '7', 'locked'],
      },
    ]);
    // A row matched that was not locked (or one locked that was not matched): refused.
    expect(guard?.queries(outcome(3, [[10], [11]]))).toBeNull();
    expect(guard?.queries(outcome(0, []))).toEqual([]);
  });

  test('no check when the set columns are proven (or not read by the where)', () => {
    expect(
      compileUpdateGuard(guardUpdate(access, planUpdate(checked, key, { status: 's' }))),
    ).toBeNull();
    expect(
      compileUpdateGuard(guardUpdate(access, planUpdate(checked, key, { customer_id: 7 }))),
    ).toBeNull();
  });

  test('rows that cannot be found by their primary key again: refused before any SQL', () => {
    const cases: [TableInfo, Record<string, unknown>][] = [
      [triggered, { note: 'x' }],
      [keyless, { note: 'x' }],
      [checked, { note: 'x', id: 4 }],
    ];
    for (const [target, body] of cases) {
      expect(() => guardUpdate(access, planUpdate(target, key, body))).toThrow(
        expect.objectContaining({ status: 403, code: 'POLICY_VIOLATION' }),
      );
    }
  });
});

describe('a create checked after it runs', () => {
  const checked: TableInfo = { ...orders, name: 'checked', hasTriggers: false };
  const triggered: TableInfo = { ...orders, name: 'triggered', hasTriggers: true };
  const rules = validatePolicy(
    {
      roles: {
        e: {
          tables: {
            '*': { read: true, create: { where: "customer_id eq @user.id and note ne 'locked'" } },
          },
        },
      },
    },
    new Map([
      ['checked', checked],
      ['triggered', triggered],
    ]),
  );
  const access: Access = {
    policy: rules,
    role: 'e',
    user: { id: '7', email: 'e@x.org', role: 'e' },
  };
  const CONDITION =
    'HAVING COUNT(*) <> ? OR SUM((((`customer_id` = ? AND CAST(`customer_id` AS CHAR) = CAST(? AS BINARY)) AND `note` <> ?)) IS NOT TRUE) > 0';

  test('the eq conjuncts before any SQL; the rest on the rows found by the ids MySQL made', () => {
    expect(() =>
      guardInsert(access, planInsert(checked, [{ customer_id: 7 }, { customer_id: 8 }])),
    ).toThrow(expect.objectContaining({ code: 'POLICY_VIOLATION' }));
    const plan = guardInsert(
      access,
      planInsert(checked, [
        { customer_id: 7, note: 'a' },
        { customer_id: 7, id: null },
      ]),
    );
    const guard = compileInsertGuard(plan);
    expect(guard?.lookup).toBeNull();
    // Two statements (a batch split at the placeholder limit), each with its first id and rows.
    expect(
      boundAll(
        guard?.queries({
          found: [],
          results: [
            { affectedRows: 1, insertId: 41 },
            { affectedRows: 1, insertId: '9007199254740993' },
          ],
        }),
        access,
      ),
    ).toEqual([
      {
        sql: `SELECT COUNT(*) FROM \`checked\` WHERE \`id\` BETWEEN ? AND ? + CAST(? AS UNSIGNED) * @@auto_increment_increment AND MOD(\`id\`, @@auto_increment_increment) = MOD(?, @@auto_increment_increment) ${CONDITION}`,
        params: [41, 41, '0', 41, 1, '7', '7', 'locked'],
      },
      {
        sql: `SELECT COUNT(*) FROM \`checked\` WHERE \`id\` BETWEEN CAST(? AS DECIMAL(65,30)) AND CAST(? AS DECIMAL(65,30)) + CAST(? AS UNSIGNED) * @@auto_increment_increment AND MOD(\`id\`, @@auto_increment_increment) = MOD(CAST(? AS DECIMAL(65,30)), @@auto_increment_increment) ${CONDITION}`,
        params: [
          '9007199254740993',
          '9007199254740993',
          '0',
          '9007199254740993',
          1,
          '7',
          '7',
          'locked',
        ],
      },
    ]);
    // Fewer rows inserted than sent, or no id: the rows are not all found, refused.
    expect(guard?.queries({ found: [], results: [{ affectedRows: 1, insertId: 41 }] })).toBeNull();
    expect(
      guard?.queries({ found: [], results: [{ affectedRows: 2, insertId: null }] }),
    ).toBeNull();
  });

  test('rows that give their primary key: found by it, as few SELECTs as placeholders allow', () => {
    const plan = guardInsert(
      access,
      planInsert(
        checked,
        [1, 2, 3].map((id) => ({ id, customer_id: 7, note: 'b' })),
      ),
    );
    // 6 placeholders: 3 for the where, 1 for the count, so 2 keys per SELECT.
    const guard = compileInsertGuard(plan, 6);
    expect(boundAll(guard?.queries({ found: [], results: [] }), access)).toEqual([
      {
        sql: `SELECT COUNT(*) FROM \`checked\` WHERE \`id\` IN (?, ?) ${CONDITION}`,
        params: [1, 2, 2, '7', '7', 'locked'],
      },
      {
        sql: `SELECT COUNT(*) FROM \`checked\` WHERE \`id\` IN (?) ${CONDITION}`,
        params: [3, 1, '7', '7', 'locked'],
      },
    ]);
  });

  test('rows that cannot be found by their primary key again: refused before any SQL', () => {
    expect(() => guardInsert(access, planInsert(triggered, { customer_id: 7 }))).toThrow(
      expect.objectContaining({ status: 403, code: 'POLICY_VIOLATION' }),
    );
    // Some rows give their AUTO_INCREMENT id, others do not: MySQL's ids may have gaps.
    expect(() =>
      guardInsert(access, planInsert(checked, [{ customer_id: 7, id: 5 }, { customer_id: 7 }])),
    ).toThrow(expect.objectContaining({ status: 403, code: 'POLICY_VIOLATION' }));
  });
});

describe('@user values are exact: byte for byte against text, canonical digits against integers', () => {
  const rules = validatePolicy(
    {
      roles: {
        u: {
          tables: {
            orders: {
              read: {
                where:
                  "status eq @user.email and note ne @user.role and status in (@user.email, 'x', null) and startswith(note, @user.id) and customer_id eq @user.id and @user.role eq 'u'",
              },
              create: { where: 'customer_id eq @user.id and status eq @user.email' },
            },
          },
        },
      },
    },
    SCHEMA,
  );
  const caller = (id: string, role = 'u'): Access => ({
    policy: rules,
    role: 'u',
    user: { id, email: 'a@x.org', role },
  });

  const where = (id: string) =>
    bindUser(compileSelect(read({ $select: 'id' }, caller(id))), caller(id).user);

  test('each use of @user compiles to an exact comparison, the values bound as the statement runs', () => {
    expect(where('7')).toEqual({
      sql:
        'SELECT `id` FROM `orders` WHERE ((`status` = ? AND CAST(`status` AS CHAR) = CAST(? AS BINARY))' +
        ' AND CAST(`note` AS CHAR) <> CAST(? AS BINARY)' +
        ' AND (`status` IN (?) OR (`status` = ? AND CAST(`status` AS CHAR) = CAST(? AS BINARY)) OR `status` IS NULL)' +
        " AND `note` LIKE CAST(? AS BINARY) ESCAPE '!'" +
        ' AND (`customer_id` = ? AND CAST(`customer_id` AS CHAR) = CAST(? AS BINARY))' +
        ' AND CAST(? AS BINARY) = CAST(? AS BINARY))',
      params: ['a@x.org', 'a@x.org', 'u', 'x', 'a@x.org', 'a@x.org', '7%', '7', '7', 'u', 'u'],
    });
  });

  test('an id that is no integer meets an integer column as NULL; the text is compared as it is', () => {
    // '07' and '-0' pass the index lookup (= 7, = 0) and fail the exact text comparison.
    for (const [id, lookup] of [
      ['07', '07'],
      ['-0', '-0'],
      ['7.0', null],
      ['7abc', null],
      [' 7', null],
    ] as const) {
      const { params } = where(id);
      expect(params.slice(7, 9)).toEqual([lookup, id]);
    }
  });

  test('create: an @user value is satisfied only by exactly that value', () => {
    const create = (id: string, body: unknown) => () =>
      guardInsert(caller(id), planInsert(orders, body));
    expect(create('7', { customer_id: 7, status: 'a@x.org' })).not.toThrow();
    expect(create('7', { customer_id: '7', status: 'a@x.org' })).not.toThrow();
    for (const [id, body] of [
      ['07', { customer_id: 7, status: 'a@x.org' }],
      ['7', { customer_id: 7, status: 'A@x.org' }],
      ['7', { customer_id: 7, status: 'a@x.org ' }],
    ] as const) {
      expect(create(id, body)).toThrow(expect.objectContaining({ code: 'POLICY_VIOLATION' }));
    }
  });

  test('against any other column type the column is compared as its text', () => {
    const withPrice = table(
      'priced',
      [
        column('id'),
        column('price', { dataType: 'decimal', kind: 'decimal', columnType: 'decimal(10,2)' }),
      ],
      ['id'],
    );
    const priced = validatePolicy(
      { roles: { u: { tables: { priced: { read: { where: 'price eq @user.id' } } } } } },
      new Map([['priced', withPrice]]),
    );
    const access: Access = {
      policy: priced,
      role: 'u',
      user: { id: '2.50', email: 'a@x.org', role: 'u' },
    };
    const plan = read({}, access, withPrice);
    expect(bindUser(compileSelect(plan), access.user)).toEqual({
      sql: 'SELECT `id`, `price` FROM `priced` WHERE CAST(`price` AS CHAR) = CAST(? AS BINARY)',
      params: ['2.50'],
    });
  });
});

describe("a role's view of a table", () => {
  const rules = validatePolicy(
    {
      roles: {
        r: {
          tables: {
            orders: {
              read: { columns: ['id', 'status'] },
              update: { columns: ['note'] },
              create: true,
            },
          },
        },
        all: { tables: { orders: { read: true, update: { columns: ['note'] } } } },
      },
    },
    SCHEMA,
  );
  const access = (role: string): Access => ({ policy: rules, role, user: null });

  test('only the columns the role may name, kept per table object and grant', () => {
    const view = readView(access('r'), orders);
    expect(view.columns.map((c) => c.name)).toEqual(['id', 'status']);
    expect(view.columns[0]).toBe(orders.columns[0]);
    expect(readView(access('r'), orders)).toBe(view);
    expect(baseTable(view)).toBe(orders);
    expect(baseTable(orders)).toBe(orders);
    // Every column, or no policy: the table itself.
    expect(readView(access('all'), orders)).toBe(orders);
    expect(readView(null, orders)).toBe(orders);
    // A body may name what the role reads and what the action writes.
    expect(writeView(access('r'), orders, 'update').columns.map((c) => c.name)).toEqual([
      'id',
      'status',
      'note',
    ]);
    expect(writeView(access('r'), orders, 'create')).toBe(orders);
  });

  test('planned through the views, a hidden column is unknown before any type rule', () => {
    for (const filter of ['year(note) eq 1', 'note eq 2024-01-01', "tolower(note) eq 'a'"]) {
      expect(() => read({ $filter: filter }, access('r'))).toThrow(
        expect.objectContaining({
          code: 'UNKNOWN_COLUMN',
          message: "Column 'note' does not exist in table 'orders'",
        }),
      );
    }
    // `*` is the view's columns.
    expect(compileSelect(read({}, access('r'))).sql).toBe('SELECT `id`, `status` FROM `orders`');
  });

  test("a role's views are its policy's: another policy's role of the same name sees its own", () => {
    const other = validatePolicy(
      { roles: { r: { tables: { orders: { read: { columns: ['id', 'note'] } } } } } },
      SCHEMA,
    );
    const mine = access('r');
    const theirs: Access = { policy: other, role: 'r', user: null };
    expect(viewerFor(mine)(orders)?.columns.map((c) => c.name)).toEqual(['id', 'status']);
    expect(viewerFor(theirs)(orders)?.columns.map((c) => c.name)).toEqual(['id', 'note']);
    expect(compileSelect(read({}, theirs)).sql).toBe('SELECT `id`, `note` FROM `orders`');
    expect(compileSelect(read({}, mine)).sql).toBe('SELECT `id`, `status` FROM `orders`');
    expect(readView(theirs, orders).columns.map((c) => c.name)).toEqual(['id', 'note']);
    expect(viewerFor(theirs)).toBe(
      viewerFor({ ...theirs, user: { id: '1', email: '', role: 'r' } }),
    );
  });
});
