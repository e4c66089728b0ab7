/**
 * RedisCounterStore against the real Redis: the same rules as the in-process store, atomic under
 * concurrent adds from two connections, keys apart per database, a refusal at open, and counting
 * in the process while Redis cannot be reached (through a TCP relay the test cuts and restores).
 */
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { Redis } from 'ioredis';
import { freePort } from '../../src/demo/private-server.js';
import { KEY_PREFIX, RedisCounterStore } from '../../src/throttle/redis-counter-store.js';
import { deleteRedisKeys, testRedisUrl } from '../helpers/redis.js';

const database = `tg_redis_${randomBytes(4).toString('hex')}`;
const other = `${database}_other`;
const stores: RedisCounterStore[] = [];

async function open(db = database, url = testRedisUrl()): Promise<RedisCounterStore> {
  const store = await RedisCounterStore.open(url, db);
  stores.push(store);
  return store;
}

afterAll(async () => {
  await Promise.all(stores.map((store) => store.close()));
  await deleteRedisKeys(database);
  await deleteRedisKeys(other);
});

test('a window starts at the first add and ends after windowMs; the key is the prefixed one', async () => {
  const store = await open();
  const first = await store.add('login\n10.0.0.1', 1, 60_000);
  expect(first).toEqual({ count: 1, resetInMs: 60_000 });
  const second = await store.add('login\n10.0.0.1', 2, 60_000);
  expect(second.count).toBe(3);
  expect(second.resetInMs).toBeGreaterThan(55_000);
  expect(second.resetInMs).toBeLessThanOrEqual(60_000);
  const client = new Redis(testRedisUrl());
  try {
    expect(await client.get(`${KEY_PREFIX}${database}:login\n10.0.0.1`)).toBe('3');
    expect(await client.pttl(`${KEY_PREFIX}${database}:login\n10.0.0.1`)).toBeGreaterThan(55_000);
  } finally {
    client.disconnect();
  }
});

test('after the window the count starts again from zero', async () => {
  const store = await open();
  expect((await store.add('short', 5, 150)).count).toBe(5);
  await new Promise((resolve) => setTimeout(resolve, 300));
  expect(await store.add('short', 1, 150)).toEqual({ count: 1, resetInMs: 150 });
});

test('a negative amount never starts a window and the count never goes below zero', async () => {
  const store = await open();
  expect(await store.add('never-added', -1, 60_000)).toEqual({ count: 0, resetInMs: 0 });
  expect((await store.add('never-added', 1, 60_000)).count).toBe(1);
  expect((await store.add('taken-back', 1, 60_000)).count).toBe(1);
  expect((await store.add('taken-back', -3, 60_000)).count).toBe(0);
  expect((await store.add('taken-back', 1, 60_000)).count).toBe(1);
});

test('concurrent adds from two connections each see a different count', async () => {
  const [a, b] = [await open(), await open()];
  const counts = await Promise.all(
    Array.from({ length: 100 }, (_, i) => (i % 2 === 0 ? a : b).add('burst', 1, 60_000)),
  );
  expect(counts.map((c) => c.count).sort((x, y) => x - y)).toEqual(
    Array.from({ length: 100 }, (_, i) => i + 1),
  );
});

test('gateways of another database count apart', async () => {
  const [mine, theirs] = [await open(), await open(other)];
  expect((await mine.add('apart', 4, 60_000)).count).toBe(4);
  expect((await theirs.add('apart', 1, 60_000)).count).toBe(1);
});

test('open rejects with the reason when nothing listens', async () => {
  const closed = await freePort();
  await expect(RedisCounterStore.open(`redis://127.0.0.1:${closed}`, database)).rejects.toThrow(
    `connect ECONNREFUSED 127.0.0.1:${closed}`,
  );
});

/** A TCP relay to the test Redis that can be cut (every connection closed, none accepted). */
async function relay(port: number) {
  const target = new URL(testRedisUrl());
  const sockets = new Set<net.Socket>();
  let server: net.Server | undefined;
  const start = () =>
    new Promise<void>((resolve) => {
      server = net.createServer((client) => {
        const upstream = net.connect(Number(target.port || 6379), target.hostname);
        for (const socket of [client, upstream]) {
          sockets.add(socket);
          socket.on('close', () => sockets.delete(socket));
          socket.on('error', () => {});
        }
        client.pipe(upstream).pipe(client);
      });
      server.listen(port, '127.0.0.1', resolve);
    });
  await start();
  return {
    start,
    cut: async () => {
      await new Promise<void>((resolve) => {
        server?.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      });
    },
  };
}

test('while Redis cannot be reached, counts stay in the process; then they go back to Redis', async () => {
  const port = await freePort();
  const link = await relay(port);
  const store = await open(database, `redis://127.0.0.1:${port}`);
  const events: string[] = [];
  store.events = {
    unavailable: (reason) => events.push(`down: ${reason}`),
    restored: () => events.push('up'),
  };
  expect((await store.add('outage', 5, 60_000)).count).toBe(5);
  await link.cut();
  // Counted here: a fresh window in the process (the limits still hold, per gateway).
  expect((await store.add('outage', 1, 60_000)).count).toBe(1);
  expect((await store.add('outage', 1, 60_000)).count).toBe(2);
  expect(events).toHaveLength(1);
  expect(events[0]).toMatch(/^down: /);
  await link.start();
  // The client reconnects by itself (within 2 s between attempts); then Redis counts again.
  let count = 0;
  for (let i = 0; i < 100 && count !== 6; i++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    count = (await store.add('outage', 1, 60_000)).count;
  }
  expect(count).toBe(6);
  expect(events.slice(1)).toEqual(['up']);
  await link.cut();
}, 30_000);
