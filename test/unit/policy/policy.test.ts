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
import {
  type Access,
  guardDelete,
  guardInsert,
  guardRead,
  guardUpdate,
} from '../../../src/policy/stage.js';
import { bindWhere, parseWhere } from '../../../src/policy/where.js';
import { parseReadOptions } from '../../../src/query/options.js';
import { compileCount, compileRead } from '../../../src/sql/compile-read.js';
import {
  compileDelete,
  compileInsertRechecks,
  compileUpdate,
  compileUpdateRecheck,
} from '../../../src/sql/compile-write.js';
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
const read = (query: Record<string, string>, t: TableInfo = orders) =>
  planRead(parseReadOptions(query), t);

describe('where', () => {
  test('@user.… become string literals of the caller, outside strings only', () => {
    const where = parseWhere(
      "note eq '@user.id' and customer_id eq @user.id or status in (@user.role, 'x')",
    );
    expect(where.usesUser).toBe(true);
    expect([...where.columns].sort()).toEqual(['customer_id', 'note', 'status']);
    expect(bindWhere(where.expr, { id: '42', email: 'a@b.c', role: 'boss' })).toEqual({
      kind: 'or',
      items: [
        {
          kind: 'and',
          items: [
            expect.objectContaining({
              left: expect.anything(),
              right: { kind: 'string', value: '@user.id' },
            }),
            expect.objectContaining({ right: { kind: 'string', value: '42' } }),
          ],
        },
        expect.objectContaining({
          kind: 'in',
          values: [
            { kind: 'string', value: 'boss' },
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
    [
      { roles: { user: { tables: { users_created_by_tablegate: { read: true } } } } },
      "roles.user.tables.users_created_by_tablegate: table 'users_created_by_tablegate' does not exist",
    ],
  ])('%j → %s', (document, message) => {
    expect(() => validatePolicy(document, SCHEMA)).toThrow(new PolicyError(message));
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
  test('planRead gives $select=* the table’s own column list (guardRead relies on it)', () => {
    expect(read({}).columns).toBe(orders.columns);
  });

  test('a read ANDs the where after the caller’s filter, as bound parameters, $count too', () => {
    const plan = guardRead(
      as('user'),
      read({ $filter: 'customer_id eq 8 or 1 eq 1', $top: '5', $count: 'true' }),
    );
    expect(compileRead(plan)).toEqual({
      sql: 'SELECT `id`, `customer_id`, `status`, `note` FROM `orders` WHERE ((`customer_id` = ? OR ? = ?) AND `customer_id` = ?) LIMIT ?',
      params: [8, 1, 1, '7', '5'],
    });
    expect(compileCount(plan)).toEqual({
      sql: 'SELECT COUNT(*) FROM `orders` WHERE ((`customer_id` = ? OR ? = ?) AND `customer_id` = ?)',
      params: [8, 1, 1, '7'],
    });
  });

  test('hidden columns: * is the granted ones; naming another anywhere is UNKNOWN_COLUMN', () => {
    expect(compileRead(guardRead(as('anonymous'), read({}))).sql).toBe(
      'SELECT `id`, `status` FROM `orders`',
    );
    const queries: Record<string, string>[] = [
      { $select: 'note' },
      { $filter: 'note eq null' },
      { $orderby: 'customer_id' },
    ];
    for (const query of queries) {
      expect(() => guardRead(as('anonymous'), read(query))).toThrow(
        expect.objectContaining({ status: 400, code: 'UNKNOWN_COLUMN' }),
      );
    }
  });

  test('no policy: the plan passes unchanged', () => {
    const plan = read({ $filter: 'id eq 1' });
    expect(guardRead(null, plan)).toBe(plan);
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
    expect(compileUpdate(update)).toEqual({
      sql: 'UPDATE `orders` SET `note` = ? WHERE `id` = ? AND (`customer_id` = ? AND `status` = ?)',
      params: ['x', 3, '7', 'open'],
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
    expect(compileDelete(deleted)).toEqual({
      sql: 'DELETE FROM `orders` WHERE `id` = ? AND `customer_id` = ?',
      params: [3, '7'],
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
});

describe('an update checked after it runs', () => {
  const checked: TableInfo = { ...orders, name: 'checked', hasTriggers: false };
  const triggered: TableInfo = { ...orders, name: 'triggered', hasTriggers: true };
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
    ]),
  );
  const access: Access = {
    policy: rules,
    role: 'e',
    user: { id: '7', email: 'e@x.org', role: 'e' },
  };
  const key = { key: 'id', value: { kind: 'number', text: '3' }, bare: '3' } as const;

  test('a set column the where reads outside col eq value: a SELECT after the UPDATE', () => {
    const plan = guardUpdate(access, planUpdate(checked, key, { note: 'x', status: 's' }));
    expect(compileUpdate(plan)).toEqual({
      sql: 'UPDATE `checked` SET `note` = ?, `status` = ? WHERE `id` = ? AND (`customer_id` = ? AND `note` <> ?)',
      params: ['x', 's', 3, '7', 'locked'],
    });
    expect(compileUpdateRecheck(plan)).toEqual({
      sql: 'SELECT 1 FROM `checked` WHERE `id` = ? AND `note` <=> ? AND `status` <=> ? AND ((`customer_id` = ? AND `note` <> ?)) IS NOT TRUE LIMIT 1',
      params: [3, 'x', 's', '7', 'locked'],
    });
  });

  test('no check when the set columns are proven (or not read by the where)', () => {
    expect(
      compileUpdateRecheck(guardUpdate(access, planUpdate(checked, key, { status: 's' }))),
    ).toBeNull();
    expect(
      compileUpdateRecheck(guardUpdate(access, planUpdate(checked, key, { customer_id: 7 }))),
    ).toBeNull();
  });

  test('a table with triggers cannot be checked that way: refused', () => {
    expect(() => guardUpdate(access, planUpdate(triggered, key, { note: 'x' }))).toThrow(
      expect.objectContaining({ status: 403, code: 'POLICY_VIOLATION' }),
    );
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

  test('the eq conjuncts before any SQL, the rest by SELECTs after the INSERT', () => {
    expect(() =>
      guardInsert(access, planInsert(checked, [{ customer_id: 7 }, { customer_id: 8 }])),
    ).toThrow(expect.objectContaining({ code: 'POLICY_VIOLATION' }));
    const plan = guardInsert(
      access,
      planInsert(checked, [{ customer_id: 7, note: 'a' }, { customer_id: 7 }]),
    );
    expect(compileInsertRechecks(plan)).toEqual([
      {
        sql: 'SELECT 1 FROM `checked` WHERE ((`customer_id` <=> ? AND `note` <=> ?) OR (`customer_id` <=> ?)) AND ((`customer_id` = ? AND `note` <> ?)) IS NOT TRUE LIMIT 1',
        params: [7, 'a', 7, '7', 'locked'],
      },
    ]);
    // Split to stay under the placeholder limit: 2 rows × 2 values + 2 condition values each.
    expect(
      compileInsertRechecks(
        guardInsert(
          access,
          planInsert(
            checked,
            [1, 2, 3].map(() => ({ customer_id: 7, note: 'b' })),
          ),
        ),
        6,
      ),
    ).toHaveLength(2);
  });

  test('a table with triggers cannot be checked that way: refused', () => {
    expect(() => guardInsert(access, planInsert(triggered, { customer_id: 7 }))).toThrow(
      expect.objectContaining({ status: 403, code: 'POLICY_VIOLATION' }),
    );
  });
});
