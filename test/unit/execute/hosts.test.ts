/**
 * The host switch of `-h db1,db2,…` (docs/operations.md) with plain in-memory hosts: which host is
 * tried, when a switch happens, and that many failing requests make one switch. The real servers
 * are in test/integration/several-hosts.test.ts.
 */
import type { DbHost } from '../../../src/db/pool.js';
import { HostSwitch, NoHostAnswered, searchOrder } from '../../../src/execute/hosts.js';
import { HOST_SEARCH_INTERVAL_MS } from '../../../src/limits.js';

/** A host that answers while `up` says so. */
class FakeHost {
  readonly up = new Map<string, boolean>();
  readonly opened: string[] = [];
  readonly retired: string[] = [];
  readonly closed: string[] = [];

  constructor(hosts: Record<string, boolean>) {
    for (const [name, up] of Object.entries(hosts)) this.up.set(name, up);
  }

  open = async (host: DbHost) => {
    await Promise.resolve();
    if (!this.up.get(host.host)) throw new Error(`connect ECONNREFUSED ${host.host}`);
    this.opened.push(host.host);
    return {
      host,
      ping: async () => this.up.get(host.host) === true,
      retire: () => void this.retired.push(host.host),
      close: async () => void this.closed.push(host.host),
    };
  };
}

const hosts = (...names: string[]): DbHost[] => names.map((host) => ({ host, port: 3306 }));
const settle = () => new Promise((resolve) => setTimeout(resolve, 10));

test('the others are tried round-robin after the host in use, never itself', () => {
  expect(searchOrder(3, 0)).toEqual([1, 2]);
  expect(searchOrder(3, 1)).toEqual([2, 0]);
  expect(searchOrder(3, 2)).toEqual([0, 1]);
  expect(searchOrder(1, 0)).toEqual([]);
});

test('start: the first host that answers; none answering names every host and why', async () => {
  const fake = new FakeHost({ a: false, b: true, c: true });
  const started = await HostSwitch.start(hosts('a', 'b', 'c'), fake.open);
  expect(started.backend.host.host).toBe('b');
  const down = new FakeHost({ a: false, b: false });
  await expect(HostSwitch.start(hosts('a', 'b'), down.open)).rejects.toThrow(
    new NoHostAnswered([
      { host: { host: 'a', port: 3306 }, error: new Error('connect ECONNREFUSED a') },
      { host: { host: 'b', port: 3306 }, error: new Error('connect ECONNREFUSED b') },
    ]),
  );
  await expect(HostSwitch.start(hosts('a', 'b'), down.open)).rejects.toThrow(
    'a:3306: connect ECONNREFUSED a; b:3306: connect ECONNREFUSED b',
  );
  // One host: its own error, as before several hosts existed.
  await expect(HostSwitch.start(hosts('a'), down.open)).rejects.toThrow(
    new Error('connect ECONNREFUSED a'),
  );
});

test('many failures at once: one switch, to the next host that answers, said once', async () => {
  const fake = new FakeHost({ a: true, b: true, c: true });
  const hostSwitch = await HostSwitch.start(hosts('a', 'b', 'c'), fake.open);
  const switches: string[] = [];
  hostSwitch.events = { switched: (from, to) => switches.push(`${from} -> ${to}`) };
  const first = hostSwitch.backend;
  fake.up.set('a', false);
  fake.up.set('b', false);
  for (let i = 0; i < 20; i++) hostSwitch.suspect(first);
  await settle();
  for (let i = 0; i < 20; i++) hostSwitch.suspect(first); // late reports about the host left
  await settle();
  expect(switches).toEqual(['a:3306 -> c:3306']);
  expect(hostSwitch.backend.host.host).toBe('c');
  expect(fake.retired).toEqual(['a']);
  // From c the search goes on round-robin: a (back now) before b.
  fake.up.set('a', true);
  fake.up.set('c', false);
  hostSwitch.suspect(hostSwitch.backend);
  await settle();
  expect(switches).toEqual(['a:3306 -> c:3306', 'c:3306 -> a:3306']);
});

test('a host that still answers a ping is kept (a lost connection is not a lost host)', async () => {
  const fake = new FakeHost({ a: true, b: true });
  const hostSwitch = await HostSwitch.start(hosts('a', 'b'), fake.open);
  hostSwitch.suspect(hostSwitch.backend);
  await settle();
  expect(hostSwitch.backend.host.host).toBe('a');
  expect(fake.opened).toEqual(['a']);
});

test('a ping already unanswered is not asked again: the search goes straight on', async () => {
  const fake = new FakeHost({ a: true, b: true });
  const hostSwitch = await HostSwitch.start(hosts('a', 'b'), fake.open);
  // Still answering, but `confirmed` says a ping just went unanswered (a frozen host that
  // would answer later): it switches without a second ping.
  hostSwitch.suspect(hostSwitch.backend, true);
  await settle();
  expect(hostSwitch.backend.host.host).toBe('b');
});

test('no host answering: it stays, searches again only after the interval, then recovers', async () => {
  const fake = new FakeHost({ a: true, b: false });
  const hostSwitch = await HostSwitch.start(hosts('a', 'b'), fake.open);
  const first = hostSwitch.backend;
  fake.up.set('a', false);
  hostSwitch.suspect(first);
  await settle();
  expect(hostSwitch.backend).toBe(first);
  fake.up.set('b', true);
  hostSwitch.suspect(first);
  await settle();
  expect(hostSwitch.backend).toBe(first); // within the interval: no new search
  await new Promise((resolve) => setTimeout(resolve, HOST_SEARCH_INTERVAL_MS));
  hostSwitch.suspect(first);
  await settle();
  expect(hostSwitch.backend.host.host).toBe('b');
});

test('one host: nothing to switch to, nothing searched', async () => {
  const fake = new FakeHost({ a: true });
  const hostSwitch = await HostSwitch.start(hosts('a'), fake.open);
  fake.up.set('a', false);
  hostSwitch.suspect(hostSwitch.backend);
  await settle();
  expect(fake.opened).toEqual(['a']);
});

test('closing during a search closes what the search opened too', async () => {
  const fake = new FakeHost({ a: true, b: true });
  const hostSwitch = await HostSwitch.start(hosts('a', 'b'), fake.open);
  fake.up.set('a', false);
  hostSwitch.suspect(hostSwitch.backend);
  await hostSwitch.close();
  // b was being opened when the close came: it is closed, not switched to.
  expect(fake.opened).toEqual(['a', 'b']);
  expect(fake.closed.sort()).toEqual(['a', 'b']);
  expect(hostSwitch.backend.host.host).toBe('a');
  expect(fake.retired).toEqual([]);
});

test('while a search is under way, settling resolves once it is over, on the host it chose', async () => {
  const fake = new FakeHost({ a: true, b: true });
  const hostSwitch = await HostSwitch.start(hosts('a', 'b'), fake.open);
  expect(hostSwitch.settling).toBeNull();
  fake.up.set('a', false);
  hostSwitch.suspect(hostSwitch.backend);
  const search = hostSwitch.settling;
  expect(search).not.toBeNull();
  await search;
  expect(hostSwitch.backend.host.host).toBe('b');
  expect(hostSwitch.settling).toBeNull();
});
