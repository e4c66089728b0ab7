/**
 * The log lines of the error handler (http/errors.ts): Fastify has no logger (log.ts), so each
 * line names its request by `reqId` itself, and a bug's answer stays the generic 500.
 */
import { Writable } from 'node:stream';
import Fastify from 'fastify';
import { pino } from 'pino';
import { databaseUnavailable } from '../../../src/errors.js';
import { registerErrorHandling } from '../../../src/http/errors.js';

function capture() {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(String(chunk)));
      done();
    },
  });
  return { lines, log: pino({ level: 'info' }, stream) };
}

const open: ReturnType<typeof Fastify>[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((instance) => instance.close()));
});

async function serve(log: ReturnType<typeof capture>['log']) {
  const instance = Fastify({ logger: false });
  open.push(instance);
  registerErrorHandling(instance, log, async () => {});
  instance.get('/bug', async () => {
    throw new TypeError('x is not a function');
  });
  instance.get('/down', async () => {
    throw databaseUnavailable();
  });
  return instance.listen({ port: 0, host: '127.0.0.1' });
}

test('a bug is logged with its request id and stack, and answered with the generic 500', async () => {
  const { lines, log } = capture();
  const base = await serve(log);
  const answer = await fetch(`${base}/bug`);
  expect(answer.status).toBe(500);
  expect(await answer.json()).toEqual({
    success: false,
    message: 'Internal server error',
    code: 'INTERNAL_ERROR',
  });
  await fetch(`${base}/bug`);
  expect(lines.map((line) => [line.level, line.reqId, line.msg])).toEqual([
    [50, 'req-1', 'request failed'],
    [50, 'req-2', 'request failed'],
  ]);
  const [first] = lines as [Record<string, unknown>];
  expect(first.err).toMatchObject({ type: 'TypeError', message: 'x is not a function' });
  expect((first.err as { stack: string }).stack).toContain('TypeError: x is not a function');
  expect(Object.keys(first)).toEqual(['level', 'time', 'pid', 'hostname', 'reqId', 'err', 'msg']);
});

test('MySQL down is one short warning with its request id and code, no stack', async () => {
  const { lines, log } = capture();
  const base = await serve(log);
  const answer = await fetch(`${base}/down`);
  expect(answer.status).toBe(503);
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatchObject({ level: 40, reqId: 'req-1', code: 'DATABASE_UNAVAILABLE' });
  expect(lines[0]).not.toHaveProperty('err');
});
