/**
 * How many bytes of what we sent a client its side has taken, as the kernel tells (Linux only).
 *
 * A process cannot tell from its own socket whether a slow client still reads: behind big TCP
 * buffers nothing moves in it for a second at a time while the client reads steadily (libuv
 * writes again only once a third of the send buffer is free). The kernel knows: its TCP tables
 * (/proc/self/net/tcp and tcp6) give each socket's `tx_queue`, the bytes sent and not yet
 * acknowledged, and the peer acknowledges what its application reads. So the bytes handed to
 * the kernel less `tx_queue` grow whenever the client reads, however slowly. When the client is
 * on this host (a proxy, a test), its own socket is in the same table, and its `rx_queue` (bytes
 * it has not read yet) is taken off too: then the count moves with each read it makes.
 *
 * A socket with nothing unacknowledged is not held up by its client at all (this process is
 * late writing to it, a busy spell): it counts as taking, whatever the count says.
 *
 * One measure reads each table once for every socket asked about; nothing is read per pause or
 * per request (acquire.ts asks only while requests wait for a connection). Where there is no
 * such table (not Linux) or the socket is not a plain TCP one, the answer is null: unknown.
 */
import { readFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import { endianness } from 'node:os';

/** One socket's row of a TCP table: its send and receive queues. */
export interface TcpQueues {
  readonly tx: number;
  readonly rx: number;
}

/** Reads a table's text, or null when there is none. */
export type TableReader = (path: string) => string | null;

const readTable: TableReader = (path) => {
  try {
    return readFileSync(path, 'latin1');
  } catch {
    return null;
  }
};

/** TCP states whose row is not a connection carrying data: TIME_WAIT, LISTEN. */
const NOT_CONNECTED = new Set(['06', '0A']);

/**
 * The rows of a TCP table's text whose "local remote" address pair (as the table spells it) is
 * in `wanted`. The format is fixed by the kernel (net/ipv4/tcp_ipv4.c, net/ipv6/tcp_ipv6.c):
 * `sl: local remote st tx_queue:rx_queue …`, all hexadecimal.
 */
export function parseTcpTable(text: string, wanted: ReadonlySet<string>): Map<string, TcpQueues> {
  const found = new Map<string, TcpQueues>();
  let start = text.indexOf('\n') + 1;
  while (start > 0 && start < text.length) {
    let end = text.indexOf('\n', start);
    if (end === -1) end = text.length;
    const colon = text.indexOf(': ', start);
    if (colon !== -1 && colon < end) {
      const local = colon + 2;
      const space = text.indexOf(' ', local);
      const pairEnd = text.indexOf(' ', space + 1);
      if (space !== -1 && pairEnd !== -1 && pairEnd < end) {
        const pair = text.slice(local, pairEnd);
        const state = text.slice(pairEnd + 1, pairEnd + 3);
        if (wanted.has(pair) && !NOT_CONNECTED.has(state)) {
          const queues = pairEnd + 4;
          const tx = Number.parseInt(text.slice(queues, queues + 8), 16);
          const rx = Number.parseInt(text.slice(queues + 9, queues + 17), 16);
          if (text[queues + 8] === ':' && Number.isFinite(tx) && Number.isFinite(rx)) {
            found.set(pair, { tx, rx });
          }
        }
      }
    }
    start = end + 1;
  }
  return found;
}

const hex = (value: number, width: number) => value.toString(16).toUpperCase().padStart(width, '0');

/**
 * The table's spelling of a 4-byte group: the kernel prints each 32-bit word of the address as a
 * number in the host's byte order.
 */
function word(bytes: readonly number[], at: number, little: boolean): string {
  const group = bytes.slice(at, at + 4).map((byte) => hex(byte, 2));
  return (little ? group.reverse() : group).join('');
}

function ipv4Bytes(address: string): number[] | null {
  const parts = address.split('.');
  if (parts.length !== 4) return null;
  const bytes = parts.map((part) => (/^\d{1,3}$/.test(part) ? Number(part) : 256));
  return bytes.every((byte) => byte <= 255) ? bytes : null;
}

function ipv6Bytes(address: string): number[] | null {
  const bare = address.split('%')[0] as string;
  let tail: number[] = [];
  let text = bare;
  const lastColon = bare.lastIndexOf(':');
  if (bare.includes('.', lastColon)) {
    const v4 = ipv4Bytes(bare.slice(lastColon + 1));
    if (v4 === null) return null;
    tail = v4;
    text = `${bare.slice(0, lastColon + 1)}0:0`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const groups = (half: string | undefined) => (half ? half.split(':') : []);
  const head = groups(halves[0]);
  const rest = groups(halves[1]);
  const missing = 8 - head.length - rest.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return null;
  const all = [...head, ...Array<string>(halves.length === 1 ? 0 : missing).fill('0'), ...rest];
  const bytes: number[] = [];
  for (const group of all) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(group)) return null;
    const value = Number.parseInt(group, 16);
    bytes.push(value >> 8, value & 0xff);
  }
  if (tail.length === 4) bytes.splice(12, 4, ...tail);
  return bytes;
}

/** An address as table `tcp` (IPv4) or `tcp6` spells it, or null when it is not of that family. */
export function tableAddress(
  address: string,
  table: 'tcp' | 'tcp6',
  little = endianness() === 'LE',
): string | null {
  if (table === 'tcp') {
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
    const bytes = ipv4Bytes(mapped ? (mapped[1] as string) : address);
    return bytes === null ? null : word(bytes, 0, little);
  }
  const bytes = address.includes(':') ? ipv6Bytes(address) : null;
  if (bytes === null) return null;
  return (
    word(bytes, 0, little) +
    word(bytes, 4, little) +
    word(bytes, 8, little) +
    word(bytes, 12, little)
  );
}

/** The "local remote" pair a table spells for these ends, or null. */
function pairOf(
  table: 'tcp' | 'tcp6',
  local: string,
  localPort: number,
  remote: string,
  remotePort: number,
): string | null {
  const from = tableAddress(local, table);
  const to = tableAddress(remote, table);
  return from === null || to === null
    ? null
    : `${from}:${hex(localPort, 4)} ${to}:${hex(remotePort, 4)}`;
}

/** The parts of a Node socket the measure reads (its libuv handle's write queue). */
interface Sent {
  readonly localAddress?: string | undefined;
  readonly localPort?: number | undefined;
  readonly remoteAddress?: string | undefined;
  readonly remotePort?: number | undefined;
  readonly remoteFamily?: string | undefined;
  readonly _bytesDispatched?: unknown;
  readonly _handle?: { readonly writeQueueSize?: unknown } | null;
}

/** Where to look for one socket: its own row and, if the client is on this host, the client's. */
interface Lookup {
  readonly table: 'tcp' | 'tcp6';
  readonly own: string;
  /** The client's row, in either table (a dual-stack server sees IPv4 clients as ::ffff:…). */
  readonly peers: readonly { readonly table: 'tcp' | 'tcp6'; readonly pair: string }[];
  /** Bytes handed to the kernel so far. */
  readonly handed: number;
}

/**
 * The bytes handed to the kernel: those Node dispatched less those still in libuv's write
 * queue. Node's own fields (net.js, stream_wrap), read in this one place.
 */
function handedOf(socket: Sent): number | null {
  const dispatched = socket._bytesDispatched;
  const queued = socket._handle?.writeQueueSize;
  return typeof dispatched === 'number' && typeof queued === 'number' ? dispatched - queued : null;
}

function lookupOf(socket: Socket): Lookup | null {
  const sent = socket as unknown as Sent;
  const { localAddress, localPort, remoteAddress, remotePort } = sent;
  const handed = handedOf(sent);
  if (!localAddress || !remoteAddress || !localPort || !remotePort || handed === null) return null;
  const table = sent.remoteFamily === 'IPv6' || localAddress.includes(':') ? 'tcp6' : 'tcp';
  const own = pairOf(table, localAddress, localPort, remoteAddress, remotePort);
  if (own === null) return null;
  const peers: { table: 'tcp' | 'tcp6'; pair: string }[] = [];
  for (const peerTable of ['tcp', 'tcp6'] as const) {
    const pair = pairOf(peerTable, remoteAddress, remotePort, localAddress, localPort);
    if (pair !== null) peers.push({ table: peerTable, pair });
  }
  return { table, own, peers, handed };
}

/** What the kernel tells of one socket's client. */
export interface Progress {
  /** The bytes it has taken so far: a count that grows only while it reads. */
  readonly taken: number;
  /** It has acknowledged all we sent: it waits for us, not we for it. */
  readonly caughtUp: boolean;
}

/**
 * For each socket, what its client has taken so far, or null when the kernel's tables cannot
 * tell. One read of each table needed.
 */
export function clientProgress(
  sockets: readonly (Socket | null)[],
  read: TableReader = readTable,
): (Progress | null)[] {
  const lookups = sockets.map((socket) => (socket === null ? null : lookupOf(socket)));
  const wanted = { tcp: new Set<string>(), tcp6: new Set<string>() };
  for (const lookup of lookups) {
    if (lookup === null) continue;
    wanted[lookup.table].add(lookup.own);
    for (const peer of lookup.peers) wanted[peer.table].add(peer.pair);
  }
  const rows = { tcp: new Map<string, TcpQueues>(), tcp6: new Map<string, TcpQueues>() };
  for (const table of ['tcp', 'tcp6'] as const) {
    if (wanted[table].size === 0) continue;
    const text = read(`/proc/self/net/${table}`);
    if (text !== null) rows[table] = parseTcpTable(text, wanted[table]);
  }
  return lookups.map((lookup) => {
    if (lookup === null) return null;
    const own = rows[lookup.table].get(lookup.own);
    if (own === undefined) return null;
    let unread = 0;
    for (const peer of lookup.peers) {
      const row = rows[peer.table].get(peer.pair);
      if (row !== undefined) {
        unread = row.rx;
        break;
      }
    }
    return { taken: lookup.handed - own.tx - unread, caughtUp: own.tx === 0 };
  });
}
