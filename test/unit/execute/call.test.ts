import { describe, expect, test } from '@jest/globals';
import { ApiError } from '../../../src/errors.js';
import { aftermath, callRetrying } from '../../../src/execute/call.js';

const AUTOCOMMIT = 0x0002;
const IN_TRANS = 0x0001;
const STATE_CHANGED = 0x4000;
const MORE_RESULTS = 0x0008;

describe('aftermath: what a routine left on its session, by its last OK packet', () => {
  const ok = (flags: number, changed?: string[]) => (changed ? { flags, changed } : { flags });
  test.each([
    ['autocommit, nothing changed', ok(AUTOCOMMIT), true, 'clean'],
    ['more result flags do not matter', ok(AUTOCOMMIT | MORE_RESULTS), true, 'clean'],
    ['a transaction left open', ok(AUTOCOMMIT | IN_TRANS), true, 'transaction-open'],
    [
      'autocommit switched off, in a transaction',
      ok(IN_TRANS | STATE_CHANGED, ['autocommit']),
      true,
      'transaction-open',
    ],
    ['autocommit switched off', ok(STATE_CHANGED, ['autocommit']), true, 'changed'],
    ['a system variable changed', ok(AUTOCOMMIT | STATE_CHANGED, ['time_zone']), true, 'changed'],
    [
      'SET STATEMENT restores max_statement_time itself',
      ok(AUTOCOMMIT | STATE_CHANGED, ['max_statement_time']),
      true,
      'clean',
    ],
    [
      'and another with it',
      ok(AUTOCOMMIT | STATE_CHANGED, ['time_zone', 'max_statement_time']),
      true,
      'changed',
    ],
    ['a change reported without names', ok(AUTOCOMMIT | STATE_CHANGED), true, 'changed'],
    ['a connection that does not report changes', ok(AUTOCOMMIT), false, 'changed'],
    ["a function's SELECT: no OK packet", undefined, true, 'clean'],
  ])('%s → %s', (_label, status, tracked, expected) => {
    expect(aftermath(status, tracked)).toBe(expected);
  });
});

describe('callRetrying: again only when nothing can have run', () => {
  const lost = () =>
    Object.assign(new Error('lost'), { code: 'PROTOCOL_CONNECTION_LOST', fatal: true });

  test('a connection lost before the CALL was sent: once more', async () => {
    let attempts = 0;
    const result = await callRetrying(async () => {
      attempts++;
      if (attempts === 1) throw lost();
      return 'ok';
    });
    expect([result, attempts]).toEqual(['ok', 2]);
  });

  test('lost after the CALL was sent: the outcome is unknown, never tried again', async () => {
    let attempts = 0;
    const failed = callRetrying(async (progress) => {
      attempts++;
      progress.committing = true;
      throw lost();
    });
    await expect(failed).rejects.toMatchObject({ code: 'WRITE_OUTCOME_UNKNOWN', status: 503 });
    expect(attempts).toBe(1);
  });

  test('a deadlock inside the routine is not retried: it may have committed before it', async () => {
    let attempts = 0;
    const deadlock = Object.assign(new Error('deadlock'), {
      code: 'ER_LOCK_DEADLOCK',
      errno: 1213,
    });
    const failed = callRetrying(async (progress) => {
      attempts++;
      progress.committing = true;
      throw deadlock;
    });
    await expect(failed).rejects.toBe(deadlock);
    expect(attempts).toBe(1);
  });

  test('an answer of ours passes as it is', async () => {
    const refusal = new ApiError(400, 'ROUTINE_ERROR', 'no');
    await expect(callRetrying(() => Promise.reject(refusal))).rejects.toBe(refusal);
  });
});
