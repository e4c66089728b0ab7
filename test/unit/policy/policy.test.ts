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
import { viewerFor } from '../../../src/policy/views.js';
import { parseWhere } from '../../../src/policy/where.js';
import { parseReadOptions } from '../../../src/query/options.js';
import { compileCount, compileRead } from '../../../src/sql/compile-read.js';
import {
  compileDelete,
  compileInsertRechecks,
  compileUpdate,
  compileUpdateRecheck,
} from '../../../src/sql/compile-write.js';
import type { CompiledQuery } from '../../../src/sql/compiled-query.js';
import { bindUser } from '../../../src/sql/user-values.js';
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
  test('a read ANDs the where after the caller’s filter, as bound parameters, $count too', () => {
    const plan = read(
      { $filter: 'customer_id eq 8 or 1 eq 1', $top: '5', $count: 'true' },
      as('user'),
    );
    expect(bound(compileRead(plan), as('user'))).toEqual({
      sql: `SELECT \`id\`, \`customer_id\`, \`status\`, \`note\` FROM \`orders\` WHERE ((\`customer_id\` = ? OR ? = ?) AND ${OWN}) LIMIT ?`,
      params: [8, 1, 1, '7', '7', '5'],
    });
    expect(bound(compileCount(plan), as('user'))).toEqual({
      sql: `SELECT COUNT(*) FROM \`orders\` WHERE ((\`customer_id\` = ? OR ? = ?) AND ${OWN})`,
      params: [8, 1, 1, '7', '7'],
    });
  });

  test('hidden columns: * is the granted ones; naming another anywhere is UNKNOWN_COLUMN', () => {
    expect(compileRead(read({}, as('anonymous'))).sql).toBe('SELECT `id`, `status` FROM `orders`');
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
    expect(compileRead(read({ $filter: 'id eq 1' }))).toEqual({
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
    expect(bound(compileUpdate(plan), access)).toEqual({
      sql: `UPDATE \`checked\` SET \`note\` = ?, \`status\` = ? WHERE \`id\` = ? AND (${OWN} AND \`note\` <> ?)`,
      params: ['x', 's', 3, '7', '7', 'locked'],
    });
    expect(bound(compileUpdateRecheck(plan) as CompiledQuery, access)).toEqual({
      sql: `SELECT 1 FROM \`checked\` WHERE \`id\` = ? AND \`note\` <=> ? AND \`status\` <=> ? AND ((${OWN} AND \`note\` <> ?)) IS NOT TRUE LIMIT 1`,
      params: [3, 'x', 's', '7', '7', 'locked'],
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
    expect(compileInsertRechecks(plan).map((check) => bound(check, access))).toEqual([
      {
        sql: `SELECT 1 FROM \`checked\` WHERE ((\`customer_id\` <=> ? AND \`note\` <=> ?) OR (\`customer_id\` <=> ?)) AND ((${OWN} AND \`note\` <> ?)) IS NOT TRUE LIMIT 1`,
        params: [7, 'a', 7, '7', '7', 'locked'],
      },
    ]);
    // Split to stay under the placeholder limit: 2 rows × 2 values + 3 condition values each.
    expect(
      compileInsertRechecks(
        guardInsert(
          access,
          planInsert(
            checked,
            [1, 2, 3].map(() => ({ customer_id: 7, note: 'b' })),
          ),
        ),
        7,
      ),
    ).toHaveLength(2);
  });

  test('a table with triggers cannot be checked that way: refused', () => {
    expect(() => guardInsert(access, planInsert(triggered, { customer_id: 7 }))).toThrow(
      expect.objectContaining({ status: 403, code: 'POLICY_VIOLATION' }),
    );
  });
});
