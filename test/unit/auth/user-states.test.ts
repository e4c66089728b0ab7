/** Revocation's cache of users (auth/user-states.ts): what it trusts, for how long, what it reads. */
import { afterEach, jest } from '@jest/globals';
import type { AuthClaims } from '../../../src/auth/tokens.js';
import { type UserState, UserStates } from '../../../src/auth/user-states.js';
import { USER_STATE_BATCH, USER_STATE_IDLE_MS, USER_STATE_STALE_MS } from '../../../src/limits.js';

const claims = (sub: string, role = 'user', passwordVersion = 'v1'): AuthClaims => ({
  sub,
  email: `${sub}@example.com`,
  role,
  exp: 0,
  nbf: 0,
  passwordVersion,
});

/** A users table in memory; records each read's ids. */
function table(rows: Record<string, UserState>) {
  const reads: string[][] = [];
  const source = async (ids: readonly string[]) => {
    reads.push([...ids]);
    return new Map(ids.flatMap((id) => (rows[id] ? [[id, rows[id]] as const] : [])));
  };
  return { rows, reads, states: new UserStates(source) };
}

afterEach(() => {
  jest.restoreAllMocks();
});

test('an unknown user is not trusted until read; then the token must match role and password version', async () => {
  const { states, reads } = table({ '1': { role: 'user', passwordVersion: 'v1' } });
  const now = Date.now();
  expect(states.current(claims('1'), now)).toBeUndefined();
  await states.load('1');
  expect(reads).toEqual([['1']]);
  expect(states.current(claims('1'), Date.now())).toBe(true);
  expect(states.current(claims('1', 'admin'), Date.now())).toBe(false);
  expect(states.current(claims('1', 'user', 'v0'), Date.now())).toBe(false);
  await states.load('2');
  expect(states.current(claims('2'), Date.now())).toBe(false);
});

test('loads of one id at once share one read', async () => {
  const { states, reads } = table({ '1': { role: 'user', passwordVersion: 'v1' } });
  await Promise.all([states.load('1'), states.load('1'), states.load('1')]);
  expect(reads).toEqual([['1']]);
});

test('an entry older than the stale bound is not trusted, whatever it says', async () => {
  const { states } = table({ '1': { role: 'user', passwordVersion: 'v1' } });
  const start = Date.now();
  states.remember('1', { role: 'user', passwordVersion: 'v1' }, start);
  expect(states.current(claims('1'), start + USER_STATE_STALE_MS)).toBe(true);
  expect(states.current(claims('1'), start + USER_STATE_STALE_MS + 1)).toBeUndefined();
});

test('refresh reads every entry in use, in batches, and sees removals and changes', async () => {
  const rows: Record<string, UserState> = {};
  const count = USER_STATE_BATCH + 3;
  for (let id = 1; id <= count; id++) rows[String(id)] = { role: 'user', passwordVersion: 'v1' };
  const { states, reads } = table(rows);
  const start = Date.now();
  for (let id = 1; id <= count; id++) states.remember(String(id), rows[String(id)] ?? null, start);
  delete rows['1'];
  rows['2'] = { role: 'admin', passwordVersion: 'v1' };
  rows['3'] = { role: 'user', passwordVersion: 'v2' };
  await states.refresh();
  expect(reads.map((ids) => ids.length)).toEqual([USER_STATE_BATCH, 3]);
  const now = Date.now();
  expect(states.current(claims('1'), now)).toBe(false);
  expect(states.current(claims('2'), now)).toBe(false);
  expect(states.current(claims('3'), now)).toBe(false);
  expect(states.current(claims('4'), now)).toBe(true);
});

test('a refresh drops the users nobody asked for lately', async () => {
  const { states, reads } = table({ '1': { role: 'user', passwordVersion: 'v1' } });
  const start = Date.now();
  states.remember('1', { role: 'user', passwordVersion: 'v1' }, start);
  states.remember('2', null, start);
  expect(states.current(claims('1'), start + 1000)).toBe(true);
  jest.spyOn(Date, 'now').mockReturnValue(start + USER_STATE_IDLE_MS + 500);
  await states.refresh();
  expect(reads).toEqual([['1']]);
  expect(states.size).toBe(1);
});

test('a read that began before a newer one does not overwrite it', () => {
  const { states } = table({});
  const start = Date.now();
  states.remember('1', { role: 'admin', passwordVersion: 'v2' }, start + 10);
  states.remember('1', { role: 'user', passwordVersion: 'v1' }, start);
  expect(states.current(claims('1', 'admin', 'v2'), start + 20)).toBe(true);
});

test('a failed read rejects the load; nothing is trusted', async () => {
  const states = new UserStates(async () => {
    throw new Error('MySQL is away');
  });
  await expect(states.load('1')).rejects.toThrow('MySQL is away');
  expect(states.current(claims('1'), Date.now())).toBeUndefined();
});
