import { describe, expect, test } from '@jest/globals';
import type { ColumnInfo } from '../../../src/db/schema-types.js';
import { planRead } from '../../../src/plan/read-plan.js';
import { planDelete, planInsert, planUpdate } from '../../../src/plan/write-plan.js';
import { parseKeyValue } from '../../../src/query/key-value.js';
import {
  compileDelete,
  compileInsert,
  compileInsertBatches,
  compileInsertReadBack,
  compileInsertReturning,
  compileUpdate,
  compileUpsertGuards,
} from '../../../src/sql/compile-write.js';
import { column, id, note, order, table } from '../fixtures/schema.js';

const kv = (text: string) => parseKeyValue(text);

describe('compileInsert', () => {
  test('one row', () => {
    expect(compileInsert(planInsert(order, { select: 'a', price: '9.99' }))).toEqual({
      sql: 'INSERT INTO `order` (`select`, `price`) VALUES (?, ?)',
      params: ['a', '9.99'],
    });
  });

  test('several rows: DEFAULT, as a keyword, where a row leaves a column out', () => {
    const plan = planInsert(order, [
      { select: 'a', price: 1 },
      { select: 'b', note: 'n' },
      { größe: 3, 'we`ird': 'w' },
    ]);
    expect(compileInsert(plan)).toEqual({
      sql:
        'INSERT INTO `order` (`select`, `price`, `note`, `größe`, `we``ird`) VALUES ' +
        '(?, ?, DEFAULT, DEFAULT, DEFAULT), (?, DEFAULT, ?, DEFAULT, DEFAULT), (DEFAULT, DEFAULT, DEFAULT, ?, ?)',
      params: ['a', '1', 'b', 'n', 3, 'w'],
    });
  });

  test('null is a parameter, not DEFAULT', () => {
    expect(compileInsert(planInsert(order, [{ note: null }, { select: 'x' }]))).toEqual({
      sql: 'INSERT INTO `order` (`note`, `select`) VALUES (?, DEFAULT), (DEFAULT, ?)',
      params: [null, 'x'],
    });
  });

  test('a hostile table name is only ever quoted', () => {
    const evil = table('x`; DROP TABLE y; --', [column('id')]);
    expect(compileInsert(planInsert(evil, { id: 1 }))).toEqual({
      sql: 'INSERT INTO `x``; DROP TABLE y; --` (`id`) VALUES (?)',
      params: [1],
    });
  });
});

describe('compileInsertBatches', () => {
  const plan = planInsert(order, [
    { select: 'a', price: 1 },
    { select: 'b' },
    { select: 'c', price: 3 },
    { select: 'd', price: 4 },
  ]);

  test('one statement when the placeholders fit', () => {
    expect(compileInsertBatches(plan)).toEqual([compileInsert(plan)]);
  });

  test('split in row order at the placeholder limit (DEFAULT takes none)', () => {
    expect(compileInsertBatches(plan, 3)).toEqual([
      {
        sql: 'INSERT INTO `order` (`select`, `price`) VALUES (?, ?), (?, DEFAULT)',
        params: ['a', '1', 'b'],
      },
      { sql: 'INSERT INTO `order` (`select`, `price`) VALUES (?, ?)', params: ['c', '3'] },
      { sql: 'INSERT INTO `order` (`select`, `price`) VALUES (?, ?)', params: ['d', '4'] },
    ]);
  });

  test('65,535 placeholders by default', () => {
    const rows = Array.from({ length: 10_000 }, (_, i) => ({
      select: `s${i}`,
      price: i,
      note: 'n',
      größe: i,
      'we`ird': 'w',
      shipped: 1,
      id: i + 1,
    }));
    const statements = compileInsertBatches(planInsert(order, rows));
    expect(statements.map((s) => s.params.length)).toEqual([65_534, 4_466]);
  });
});

describe('compileUpdate', () => {
  test('SET in body order, integer key as a number', () => {
    expect(compileUpdate(planUpdate(order, kv('id,5'), { price: '1.50', note: null }))).toEqual({
      sql: 'UPDATE `order` SET `price` = ?, `note` = ? WHERE `id` = ?',
      params: ['1.5', null, 5],
    });
  });

  test('text key with quotes and commas', () => {
    expect(
      compileUpdate(planUpdate(order, kv("select,'O''Brien, Jo'"), { 'we`ird': 'x' })),
    ).toEqual({
      sql: 'UPDATE `order` SET `we``ird` = ? WHERE `select` = ?',
      params: ['x', "O'Brien, Jo"],
    });
  });

  test('null key → IS NULL', () => {
    expect(compileUpdate(planUpdate(order, kv('note,null'), { note: 'set' }))).toEqual({
      sql: 'UPDATE `order` SET `note` = ? WHERE `note` IS NULL',
      params: ['set'],
    });
  });

  test('integer key beyond 2^53 stays exact (CAST to DECIMAL, as in reads)', () => {
    expect(compileUpdate(planUpdate(order, kv('id,9007199254740993'), { shipped: true }))).toEqual({
      sql: 'UPDATE `order` SET `shipped` = ? WHERE `id` = CAST(? AS DECIMAL(65,30))',
      params: [1, '9007199254740993'],
    });
  });

  test('decimal key', () => {
    expect(compileUpdate(planUpdate(order, kv('price,12.50'), { shipped: 0 }))).toEqual({
      sql: 'UPDATE `order` SET `shipped` = ? WHERE `price` = CAST(? AS DECIMAL(65,30))',
      params: [0, '12.5'],
    });
  });
});

describe('compileDelete', () => {
  test('integer key', () => {
    expect(compileDelete(planDelete(order, kv('id,5')))).toEqual({
      sql: 'DELETE FROM `order` WHERE `id` = ?',
      params: [5],
    });
  });

  test('a bare number is the text of a text key', () => {
    expect(compileDelete(planDelete(order, kv('select,007')))).toEqual({
      sql: 'DELETE FROM `order` WHERE `select` = ?',
      params: ['007'],
    });
  });

  test('null key', () => {
    expect(compileDelete(planDelete(order, kv('größe,NULL')))).toEqual({
      sql: 'DELETE FROM `order` WHERE `größe` IS NULL',
      params: [],
    });
  });

  test('backtick-quoted key with a backtick', () => {
    expect(compileDelete(planDelete(order, kv("`we``ird`,'a'")))).toEqual({
      sql: 'DELETE FROM `order` WHERE `we``ird` = ?',
      params: ['a'],
    });
  });
});

describe('upserts: INSERT … ON DUPLICATE KEY UPDATE', () => {
  const people = table(
    'people',
    [
      column('id', { autoIncrement: true, hasDefault: true }),
      column('email', { dataType: 'char', columnType: 'char(8)', kind: 'string', maxLength: 8 }),
      column('n'),
      column('m', { nullable: true, hasDefault: true }),
    ],
    ['id'],
  );
  const keyed = { ...people, uniqueKeys: [['email']] };

  test('merge: the columns each run of rows gives, but the primary key, to VALUES(col)', () => {
    const plan = planInsert(
      keyed,
      [
        { id: 1, email: 'a', n: 1 },
        { id: 2, email: 'b', n: 2 },
        { email: 'c', m: 3 },
      ],
      'merge-duplicates',
    );
    expect(compileInsertBatches(plan)).toEqual([
      {
        sql: 'INSERT INTO `people` (`id`, `email`, `n`, `m`) VALUES (?, ?, ?, DEFAULT), (?, ?, ?, DEFAULT) ON DUPLICATE KEY UPDATE `email` = VALUES(`email`), `n` = VALUES(`n`)',
        params: [1, 'a', 1, 2, 'b', 2],
      },
      {
        sql: 'INSERT INTO `people` (`id`, `email`, `n`, `m`) VALUES (DEFAULT, ?, DEFAULT, ?) ON DUPLICATE KEY UPDATE `email` = VALUES(`email`), `m` = VALUES(`m`)',
        params: ['c', 3],
      },
    ]);
  });

  test('ignore (or a merge of the key alone): a key column set to itself, never INSERT IGNORE', () => {
    for (const [body, resolution] of [
      [[{ email: 'a', n: 1 }, { n: 2 }], 'ignore-duplicates'],
      [{ id: 4 }, 'merge-duplicates'],
    ] as const) {
      const statements = compileInsertBatches(planInsert(keyed, body, resolution));
      expect(statements).toHaveLength(1);
      expect(statements[0]?.sql).toMatch(/ ON DUPLICATE KEY UPDATE `id` = `id`$/);
      expect(statements[0]?.sql).not.toMatch(/IGNORE/);
    }
  });

  test('checked rows: one statement each; the lookup locks what each row’s keys meet', () => {
    const plan = planInsert(
      keyed,
      [{ email: 'a  ', n: 1 }, { id: 7, n: 2 }, { n: 3 }],
      'merge-duplicates',
    );
    const condition = {
      kind: 'isNull',
      operand: {
        kind: 'column',
        source: { table: keyed, alias: 't0' },
        column: keyed.columns[3] as ColumnInfo,
      },
      negated: true,
    } as const;
    const checked = {
      ...plan,
      onDuplicate: {
        resolution: 'merge-duplicates' as const,
        perRow: true,
        checks: { before: condition, after: condition, key: [keyed.columns[0] as ColumnInfo] },
      },
    };
    expect(compileInsertBatches(checked).map((s) => s.params)).toEqual([['a  ', 1], [2, 7], [3]]);
    const guards = compileUpsertGuards(checked);
    // A CHAR value as the index compares it: without its trailing spaces.
    expect(guards.map((g) => g.lookup)).toEqual([
      {
        sql: 'SELECT `id`, (`m` IS NOT NULL) IS TRUE FROM `people` WHERE (`email` = ?) FOR UPDATE',
        params: ['a'],
      },
      {
        sql: 'SELECT `id`, (`m` IS NOT NULL) IS TRUE FROM `people` WHERE (`id` = ?) FOR UPDATE',
        params: [7],
      },
      null,
    ]);
    const results = [
      { affectedRows: 2, insertId: 5 },
      { affectedRows: 1, insertId: 7 },
      { affectedRows: 1, insertId: 8 },
    ];
    // Met a row inside the update where: that row, by its key, checked afterwards.
    expect(guards[0]?.queries({ found: [[5, 1]], results })).toEqual([
      {
        sql: 'SELECT COUNT(*) FROM `people` WHERE `id` IN (?) HAVING COUNT(*) <> ? OR SUM((`m` IS NOT NULL) IS NOT TRUE) > 0',
        params: [5, 1],
      },
    ]);
    // Met a row outside it (another tenant's): refused.
    expect(guards[0]?.queries({ found: [[5, 0]], results })).toBeNull();
    // Met none: an insert (counted 1), found by the key it gives or the id MySQL made.
    expect(guards[1]?.queries({ found: [], results })?.[0]?.params).toEqual([7, 1]);
    expect(guards[2]?.queries({ found: [], results })?.[0]).toEqual({
      sql: 'SELECT COUNT(*) FROM `people` WHERE `id` = ? HAVING COUNT(*) <> ? OR SUM((`m` IS NOT NULL) IS NOT TRUE) > 0',
      params: [8, 1],
    });
    // Met none yet updated a row (two rows with one key): refused.
    expect(
      guards[2]?.queries({
        found: [],
        results: [...results.slice(0, 2), { affectedRows: 2, insertId: 5 }],
      }),
    ).toBeNull();
  });

  test('ignore-duplicates with a where only on the rows met: the lookup alone, no primary key needed', () => {
    const plan = planInsert(keyed, [{ email: 'a', n: 1 }, { n: 3 }], 'ignore-duplicates');
    const condition = {
      kind: 'isNull',
      operand: {
        kind: 'column',
        source: { table: keyed, alias: 't0' },
        column: keyed.columns[3] as ColumnInfo,
      },
      negated: true,
    } as const;
    const checked = {
      ...plan,
      onDuplicate: {
        resolution: 'ignore-duplicates' as const,
        perRow: true,
        checks: { before: condition, after: null, key: [] },
      },
    };
    const guards = compileUpsertGuards(checked);
    expect(guards.map((g) => g.lookup)).toEqual([
      {
        sql: 'SELECT (`m` IS NOT NULL) IS TRUE FROM `people` WHERE (`email` = ?) FOR UPDATE',
        params: ['a'],
      },
      null,
    ]);
    const results = [
      { affectedRows: 1, insertId: 0 },
      { affectedRows: 1, insertId: 9 },
    ];
    // Met the caller's own row: left as it is, nothing to check after.
    expect(guards[0]?.queries({ found: [[1]], results })).toEqual([]);
    // Met another's: refused.
    expect(guards[0]?.queries({ found: [[0]], results })).toBeNull();
    expect(guards[1]?.queries({ found: [], results })).toEqual([]);
  });
});

describe('read-back', () => {
  const read = planRead(
    { select: '*', filter: null, orderBy: [], top: null, skip: null, count: false },
    order,
  );

  test('a created row by the id MySQL made, with the read’s own columns', () => {
    const plan = planInsert(order, { select: 'a' });
    const back = compileInsertReadBack(plan, { kind: 'auto-increment', column: id }, read);
    expect(back.lookup).toBeNull();
    expect(back.queries({ found: [], results: [{ affectedRows: 1, insertId: 41 }] })).toEqual([
      {
        sql: 'SELECT `id`, `select`, `price`, `note`, `größe`, `we``ird`, `shipped` FROM `order` WHERE (`id` = ?)',
        params: [41],
      },
    ]);
  });

  test('INSERT … RETURNING the read, its row condition as a flag, and the AUTO_INCREMENT id', () => {
    const plan = planInsert(order, { select: 'a' });
    const filter = {
      kind: 'isNull',
      operand: { kind: 'column', source: read.source, column: note },
      negated: false,
    } as const;
    const returning = compileInsertReturning(plan, { ...read, filter });
    expect(returning).toEqual({
      statement: {
        sql: 'INSERT INTO `order` (`select`) VALUES (?) RETURNING `id`, `select`, `price`, `note`, `größe`, `we``ird`, `shipped`, (`note` IS NULL) IS TRUE, `id`',
        params: ['a'],
      },
      returning: { width: 7, visibleAt: 7, insertIdAt: 8 },
    });
  });
});
