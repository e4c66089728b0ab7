/**
 * The retry decisions (execute/retry.ts) from the errors' shapes as mysql2 3.x delivers them
 * (seen against MariaDB 10.11: test/integration/retry.test.ts runs the same paths for real). The
 * phase rule — a connection lost after the COMMIT was sent is never retried — is checked here
 * for the transaction's COMMIT too, which the integration test cannot stop at will.
 */
import { failureOf, mapDbError, ServerSilent } from '../../../src/db/errors.js';
import { apiError } from '../../../src/errors.js';
import { readRetrying, writeRetrying, writeRetryingBy } from '../../../src/execute/retry.js';
import type { WriteProgress } from '../../../src/execute/write.js';
import { WRITE_ATTEMPTS } from '../../../src/limits.js';

const deadlock = () =>
  Object.assign(new Error('Deadlock found'), {
    code: 'ER_LOCK_DEADLOCK',
    errno: 1213,
    sqlState: '40001',
  });
const notReady = () =>
  Object.assign(new Error('WSREP has not yet prepared node for application use'), {
    code: 'ER_UNKNOWN_COM_ERROR',
    errno: 1047,
    sqlState: '08S01',
  });
const lost = () =>
  Object.assign(new Error('Connection lost: The server closed the connection.'), {
    code: 'PROTOCOL_CONNECTION_LOST',
    fatal: true,
  });
const killed = () =>
  Object.assign(new Error('Connection was killed'), { errno: 1927, sqlState: '70100' });
const closedState = () =>
  Object.assign(new Error("Can't add new command when connection is in closed state"), {
    fatal: true,
  });
const lockWait = () =>
  Object.assign(new Error('Lock wait timeout exceeded'), {
    code: 'ER_LOCK_WAIT_TIMEOUT',
    errno: 1205,
  });

describe('failureOf', () => {
  test.each([
    ['a deadlock or certification failure', deadlock(), 'rolled-back'],
    ['Galera without quorum', notReady(), 'node-not-ready'],
    ['a closed connection', lost(), 'lost'],
    ['KILL CONNECTION (MariaDB 1927)', killed(), 'lost'],
    ['a command on a closed connection', closedState(), 'lost'],
    ['ECONNRESET', Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }), 'lost'],
    ["the watchdog's cut", new ServerSilent(), 'silent'],
    ['a lock wait timeout', lockWait(), 'other'],
    ['a catalogue error', apiError('DATABASE_BUSY'), 'other'],
  ])('%s', (_name, error, failure) => {
    expect(failureOf(error)).toBe(failure);
  });

  test('Galera without quorum and a command on a closed connection answer 503 when they stay', () => {
    expect(mapDbError(notReady()).code).toBe('DATABASE_UNAVAILABLE');
    expect(mapDbError(closedState()).code).toBe('DATABASE_UNAVAILABLE');
  });
});

/** An attempt that fails with `errors` in turn (marking the COMMIT sent when `committing`), then succeeds. */
function attempts(errors: { error: Error; committing?: boolean }[]) {
  const seen: number[] = [];
  const attempt = async (progress: WriteProgress) => {
    seen.push(seen.length + 1);
    const next = errors.shift();
    if (next === undefined) return 'stored';
    progress.committing = next.committing ?? false;
    throw next.error;
  };
  return { attempt, seen };
}

type Retrying = <T>(attempt: (progress: WriteProgress) => Promise<T>) => Promise<T>;

/** writeRetryingBy with the same attempts by callback: the same decisions as writeRetrying. */
const byCallback: Retrying = (attempt) =>
  writeRetryingBy((progress, done) => {
    attempt(progress).then((value) => done(null, value), done);
  });

describe.each<[string, Retrying]>([
  ['writeRetrying', writeRetrying],
  ['writeRetryingBy', byCallback],
])('%s', (_name, writeRetrying) => {
  test(`a write rolled back ${WRITE_ATTEMPTS - 1} times is stored on attempt ${WRITE_ATTEMPTS}, also when it was refused at COMMIT`, async () => {
    const run = attempts([{ error: deadlock(), committing: true }, { error: notReady() }]);
    await expect(writeRetrying(run.attempt)).resolves.toBe('stored');
    expect(run.seen).toEqual([1, 2, 3]);
  });

  test(`rolled back ${WRITE_ATTEMPTS} times: the last error, no further attempt`, async () => {
    const run = attempts(Array.from({ length: WRITE_ATTEMPTS + 1 }, () => ({ error: deadlock() })));
    await expect(writeRetrying(run.attempt)).rejects.toMatchObject({ code: 'ER_LOCK_DEADLOCK' });
    expect(run.seen).toHaveLength(WRITE_ATTEMPTS);
  });

  test('a connection lost before the COMMIT was sent: tried once more, and only once', async () => {
    const once = attempts([{ error: lost() }]);
    await expect(writeRetrying(once.attempt)).resolves.toBe('stored');
    expect(once.seen).toEqual([1, 2]);
    const twice = attempts([{ error: lost() }, { error: killed() }]);
    await expect(writeRetrying(twice.attempt)).rejects.toMatchObject({ errno: 1927 });
    expect(twice.seen).toEqual([1, 2]);
  });

  test.each([
    ['lost', lost()],
    ['killed', killed()],
    ['cut by the watchdog', new ServerSilent()],
  ])(
    'a connection %s after the COMMIT was sent: WRITE_OUTCOME_UNKNOWN, never retried',
    async (_name, error) => {
      const run = attempts([{ error, committing: true }]);
      await expect(writeRetrying(run.attempt)).rejects.toMatchObject({
        status: 503,
        code: 'WRITE_OUTCOME_UNKNOWN',
      });
      expect(run.seen).toEqual([1]);
    },
  );

  test('not retried: a lock wait timeout, the watchdog before COMMIT, a catalogue error', async () => {
    for (const error of [lockWait(), new ServerSilent(), apiError('DATABASE_BUSY')]) {
      const run = attempts([{ error }]);
      await expect(writeRetrying(run.attempt)).rejects.toBe(error);
      expect(run.seen).toEqual([1]);
    }
  });
});

describe('writeRetryingBy', () => {
  test('an attempt that throws has failed like any other: retried by the same rule', async () => {
    let calls = 0;
    await expect(
      writeRetryingBy((_progress, done) => {
        calls++;
        if (calls === 1) throw deadlock();
        done(null, 'stored');
      }),
    ).resolves.toBe('stored');
    expect(calls).toBe(2);
    calls = 0;
    await expect(
      writeRetryingBy((progress) => {
        calls++;
        progress.committing = true;
        throw lost();
      }),
    ).rejects.toMatchObject({ code: 'WRITE_OUTCOME_UNKNOWN' });
    expect(calls).toBe(1);
  });
});

describe('readRetrying', () => {
  test('a read on a lost connection or a node without quorum runs once more, and only once', async () => {
    for (const error of [lost(), notReady()]) {
      let calls = 0;
      await expect(
        readRetrying(async () => {
          calls++;
          if (calls < 3) throw error;
          return 'rows';
        }),
      ).rejects.toBe(error);
      expect(calls).toBe(2);
    }
  });

  test('a deadlock, a timeout or the watchdog are not read again', async () => {
    for (const error of [deadlock(), lockWait(), new ServerSilent()]) {
      let calls = 0;
      await expect(
        readRetrying(async () => {
          calls++;
          throw error;
        }),
      ).rejects.toBe(error);
      expect(calls).toBe(1);
    }
  });
});
