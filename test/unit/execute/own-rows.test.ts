/**
 * execute/statements.ts rowsOf: a read of the gateway's own (the schema's information_schema
 * rows) takes its rows as they arrive and pauses its connection for a turn of the event loop
 * every 200 rows, so that ten thousand rows are not parsed and made into objects in one go. The
 * connection here behaves as mysql2's does: its rows come one after another, synchronously,
 * until it is paused; what arrived meanwhile waits for resume().
 */
import { EventEmitter } from 'node:events';
import { describe, expect, test } from '@jest/globals';
import type { PoolConnection } from 'mysql2';
import type { Lending } from '../../../src/execute/lending.js';
import { rowsOf } from '../../../src/execute/statements.js';

/** A connection whose query answers `count` rows of (n, 'row n'), or fails after `failAt`. */
function connection(count: number, failAt?: number) {
  const seen = { pauses: 0, statements: [] as string[] };
  let paused = false;
  let next = 0;
  let command: EventEmitter | null = null;
  const deliver = () => {
    const current = command as EventEmitter;
    while (!paused && next < count) {
      if (next === failAt) {
        current.emit('error', Object.assign(new Error('Unknown table'), { errno: 1109 }));
        current.emit('end');
        return;
      }
      current.emit('result', [next, `row ${next}`]);
      next++;
    }
    if (!paused) current.emit('end');
  };
  const held = {
    query(sql: string) {
      seen.statements.push(sql);
      command = new EventEmitter();
      // mysql2 answers on a later turn, after the caller listened.
      setImmediate(() => {
        command?.emit('fields', [{ name: 'n' }, { name: 'label' }]);
        deliver();
      });
      return command;
    },
    pause() {
      seen.pauses++;
      paused = true;
    },
    resume() {
      paused = false;
      deliver();
    },
  };
  const lending = {
    using: <T>(_address: string, work: (held: PoolConnection) => Promise<T>) =>
      work(held as unknown as PoolConnection),
  } as unknown as Lending;
  return { lending, seen };
}

const QUERY = { sql: 'SELECT n, label FROM information_schema.x', params: [] };

describe('rowsOf', () => {
  test('10,000 rows come as objects in order, a turn of the loop every 200 rows', async () => {
    const { lending, seen } = connection(10_000);
    let turns = 0;
    let reading = true;
    const turn = () => {
      turns++;
      if (reading) setImmediate(turn);
    };
    setImmediate(turn);
    const rows = await rowsOf<{ n: number; label: string }>(lending, QUERY);
    reading = false;
    expect(rows).toHaveLength(10_000);
    expect(rows[0]).toEqual({ n: 0, label: 'row 0' });
    expect(rows[9_999]).toEqual({ n: 9_999, label: 'row 9999' });
    expect(rows.every((row, i) => row.n === i)).toBe(true);
    expect(seen.pauses).toBe(50);
    // Another callback ran at every pause, not only before and after the read.
    expect(turns).toBeGreaterThanOrEqual(50);
  });

  test('fewer than 200 rows come without a pause', async () => {
    const { lending, seen } = connection(150);
    const rows = await rowsOf(lending, QUERY);
    expect(rows).toHaveLength(150);
    expect(seen.pauses).toBe(0);
  });

  test("a statement's error is the read's, after a pause too", async () => {
    const { lending, seen } = connection(1_000, 450);
    await expect(rowsOf(lending, QUERY)).rejects.toMatchObject({ message: 'Unknown table' });
    expect(seen.pauses).toBe(2);
    expect(seen.statements).toEqual([QUERY.sql]);
  });
});
