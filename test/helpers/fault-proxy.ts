/**
 * A TCP proxy in front of a MySQL server that breaks the connections through it the way a dying
 * server or a broken network does, so the gateway's handling of every moment of a connection's
 * loss can be drilled without stopping the server others use. What it does follows `breaking`,
 * read at every packet: a connection that went through untouched so far is broken by a rule set
 * later too.
 */
import net from 'node:net';

export type Break =
  /** Everything goes through. */
  | { readonly kind: 'none' }
  /**
   * A prepared statement (COM_STMT_PREPARE or COM_STMT_EXECUTE) is not passed on: the
   * connection is reset instead, so the server never sees it. Plain queries (the session setup,
   * pings) go through: the server looks alive, every statement's connection dies under it.
   */
  | { readonly kind: 'at-statement' }
  /**
   * After a random number of the server's bytes (below `maxBytes`, drawn per connection), the
   * connection is cut: mid-handshake, mid-packet, mid-result. By a reset, by a FIN, or by a
   * close, drawn per cut.
   */
  | { readonly kind: 'at-random-byte'; readonly maxBytes: number; readonly random: () => number }
  /**
   * A replication connection (one that asked for the binary log: COM_BINLOG_DUMP or
   * COM_BINLOG_DUMP_GTID) goes silent both ways, as a network gone without a word does: its
   * bytes are dropped, its sockets stay open, no reset and no FIN. Other connections go through.
   */
  | { readonly kind: 'freeze-binlog' };

export interface FaultProxy {
  readonly port: number;
  breaking: Break;
  /** Connections broken so far, by how. */
  readonly broken: Record<'reset' | 'end' | 'destroy', number>;
  /** Prepared statements stopped by `at-statement` so far. */
  readonly statementsStopped: number;
  close(): Promise<void>;
}

const COM_STMT_PREPARE = 0x16;
const COM_STMT_EXECUTE = 0x17;
const COM_BINLOG_DUMP = 0x12;
const COM_BINLOG_DUMP_GTID = 0x1e;

/**
 * Follows the client's packets across chunks and says whether a chunk held the start of a
 * prepared-statement command (sequence id 0 starts a command; the handshake's packets do not).
 */
class CommandSpotter {
  private head = Buffer.alloc(0);
  private skip = 0;
  /** The connection asked for the binary log. */
  dump = false;

  spots(chunk: Buffer): boolean {
    let found = false;
    let offset = 0;
    while (offset < chunk.length) {
      if (this.skip > 0) {
        const skipped = Math.min(this.skip, chunk.length - offset);
        this.skip -= skipped;
        offset += skipped;
        continue;
      }
      // The 4-byte header and the first byte of the payload (the command).
      const taken = chunk.subarray(offset, offset + 5 - this.head.length);
      this.head = Buffer.concat([this.head, taken]);
      offset += taken.length;
      if (this.head.length < 5) break;
      const length = this.head.readUIntLE(0, 3);
      const command = this.head[4];
      if (length === 0) {
        // An empty packet: its fifth byte begins the next one.
        this.head = this.head.subarray(4);
        continue;
      }
      if (this.head[3] === 0 && (command === COM_STMT_PREPARE || command === COM_STMT_EXECUTE)) {
        found = true;
      }
      if (this.head[3] === 0 && (command === COM_BINLOG_DUMP || command === COM_BINLOG_DUMP_GTID)) {
        this.dump = true;
      }
      this.skip = length - 1;
      this.head = Buffer.alloc(0);
    }
    return found;
  }
}

export async function startFaultProxy(target: { host: string; port: number }): Promise<FaultProxy> {
  const broken = { reset: 0, end: 0, destroy: 0 };
  let statementsStopped = 0;
  const sockets = new Set<net.Socket>();
  const proxy: FaultProxy = {
    port: 0,
    breaking: { kind: 'none' },
    broken,
    get statementsStopped() {
      return statementsStopped;
    },
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };

  const server = net.createServer((client) => {
    const upstream = net.connect(target.port, target.host);
    sockets.add(client);
    sockets.add(upstream);
    const spotter = new CommandSpotter();
    let received = 0;
    let cutAt: number | undefined;
    let cut = false;
    const breakWith = (how: keyof typeof broken) => {
      cut = true;
      broken[how]++;
      if (how === 'reset') client.resetAndDestroy();
      else if (how === 'end') client.end();
      else client.destroy();
      upstream.destroy();
    };
    const frozen = () => spotter.dump && proxy.breaking.kind === 'freeze-binlog';
    upstream.on('data', (data: Buffer) => {
      if (cut || frozen()) return;
      const rule = proxy.breaking;
      if (rule.kind === 'at-random-byte') {
        cutAt ??= received + Math.floor(rule.random() * rule.maxBytes);
        if (received + data.length > cutAt) {
          const part = data.subarray(0, cutAt - received);
          if (part.length > 0) client.write(part);
          const hows = ['reset', 'end', 'destroy'] as const;
          breakWith(hows[Math.floor(rule.random() * hows.length)] ?? 'reset');
          return;
        }
      }
      received += data.length;
      client.write(data);
    });
    client.on('data', (data: Buffer) => {
      if (cut || frozen()) return;
      if (spotter.spots(data) && proxy.breaking.kind === 'at-statement') {
        statementsStopped++;
        breakWith('reset');
        return;
      }
      upstream.write(data);
    });
    const forget = () => {
      sockets.delete(client);
      sockets.delete(upstream);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', forget);
    upstream.on('error', forget);
    client.on('close', forget);
    upstream.on('close', forget);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return Object.assign(proxy, { port: (server.address() as net.AddressInfo).port });
}

/** A seeded generator of numbers in [0, 1) (mulberry32): a fuzz run can be replayed. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
