/**
 * A client process of the feed bench (bench/changes.mjs), driven through its IPC channel. Two
 * jobs, each told by a message:
 *
 * - `stream`: opens SSE streams, each from its own loopback address, and for every event that
 *   arrives takes the change number (`seq`) and the writer's time just before the commit
 *   (`sent_us`) out of the row, without parsing the JSON (a 1,000-subscriber run delivers
 *   half a million events a second, and this process shares the CPU with the server it
 *   measures). Delivery time is when the bytes reach this process. Per stream: which changes
 *   came (a bitmap), duplicates, changes it should not have seen, and how it ended.
 * - `poll`: clients that read `updated_at gt <the newest they have seen>` once a second each,
 *   on keep-alive connections, spread evenly over the second.
 *
 * Latencies go into a histogram of 0.1 ms buckets; the parent merges those of every process.
 */
import http from 'node:http';
import net from 'node:net';

const SEQ = Buffer.from('"seq":');
const SENT = Buffer.from('"sent_us":');
const EVENT_END = Buffer.from('\n\n');
const HEAD_END = Buffer.from('\r\n\r\n');
const ENDINGS = ['overflow', 'expired', 'error'].map((name) => ({
  name,
  marker: Buffer.from(`event: ${name}\n`),
}));
/** Histogram buckets of 100 µs, up to 60 s (the last bucket holds everything slower). */
const BUCKET_US = 100;
const BUCKETS = 600_000;
/** A poll not answered within this is given up (an error). */
const POLL_TIMEOUT_MS = 5000;
const UPDATED_AT = '"updated_at":"';

const nowUs = () => (performance.timeOrigin + performance.now()) * 1000;

class Histogram {
  constructor() {
    this.counts = new Uint32Array(BUCKETS);
    this.maxUs = 0;
  }

  add(us) {
    if (us > this.maxUs) this.maxUs = us;
    const bucket = us <= 0 ? 0 : Math.min(BUCKETS - 1, Math.floor(us / BUCKET_US));
    this.counts[bucket]++;
  }

  /** `[bucket, count]` pairs of the buckets that hold anything: small enough for IPC. */
  sparse() {
    const pairs = [];
    for (let i = 0; i < BUCKETS; i++) if (this.counts[i] > 0) pairs.push([i, this.counts[i]]);
    return { pairs, maxUs: this.maxUs, bucketUs: BUCKET_US };
  }
}

/** The unsigned integer at `pos` (a leading quote skipped: BIGINT may come as a string). */
function readNumber(buffer, pos) {
  let i = pos;
  if (buffer[i] === 0x22) i++;
  let value = 0;
  let digits = 0;
  for (; i < buffer.length; i++) {
    const c = buffer[i];
    if (c < 0x30 || c > 0x39) break;
    value = value * 10 + (c - 0x30);
    digits++;
  }
  return digits > 0 ? value : -1;
}

const histogram = new Histogram();
const streams = [];
const sockets = [];

/** Which changes a stream's caller may see: all (`owner` -1) or those of its owner. */
function visible(stream, seq) {
  return stream.owner < 0 || seq % stream.users === stream.owner;
}

function take(stream, chunk, at) {
  const buffer = stream.leftover ? Buffer.concat([stream.leftover, chunk]) : chunk;
  const last = buffer.lastIndexOf(EVENT_END);
  if (last < 0) {
    stream.leftover = Buffer.from(buffer);
    return;
  }
  const end = last + EVENT_END.length;
  stream.leftover = end < buffer.length ? Buffer.from(buffer.subarray(end)) : null;
  let pos = 0;
  for (;;) {
    pos = buffer.indexOf(SEQ, pos);
    if (pos < 0 || pos >= end) break;
    const seq = readNumber(buffer, pos + SEQ.length);
    const sentAt = buffer.indexOf(SENT, pos);
    pos += SEQ.length;
    if (seq < 0 || sentAt < 0 || sentAt >= end) {
      stream.unreadable++;
      continue;
    }
    const sent = readNumber(buffer, sentAt + SENT.length);
    stream.received++;
    if (seq >= stream.seen.length) {
      stream.unexpected++;
      continue;
    }
    if (!visible(stream, seq)) stream.unexpected++;
    if (stream.seen[seq] === 1) {
      stream.duplicates++;
      continue;
    }
    stream.seen[seq] = 1;
    stream.distinct++;
    histogram.add(at - sent);
  }
  for (const { name, marker } of ENDINGS) {
    const found = buffer.indexOf(marker);
    if (found >= 0 && found < end) stream.ending ??= name;
  }
}

/**
 * One stream on a plain TCP socket, the request written by hand: Node's HTTP client hands over
 * each chunk of a chunked answer as a call of its own (one per event), which made the client
 * processes, not the servers, the bottleneck; a socket hands over whatever arrived at once.
 * The markers are found in the raw bytes: the chunk framing lies between whole events.
 */
function open(base, client, plan) {
  return new Promise((resolve) => {
    const stream = {
      owner: client.owner,
      users: plan.users,
      seen: new Uint8Array(plan.capacity),
      leftover: null,
      received: 0,
      distinct: 0,
      duplicates: 0,
      unexpected: 0,
      unreadable: 0,
      status: 0,
      ending: null,
      closed: false,
    };
    streams.push(stream);
    const socket = net.connect({ host: base.host, port: base.port, localAddress: client.address });
    sockets.push(socket);
    let head = null;
    socket.on('connect', () => {
      const auth = client.token ? `Authorization: Bearer ${client.token}\r\n` : '';
      socket.write(
        `GET ${client.path} HTTP/1.1\r\nHost: ${base.host}:${base.port}\r\nAccept: text/event-stream\r\n${auth}\r\n`,
      );
    });
    socket.on('data', (chunk) => {
      const at = nowUs();
      if (stream.status === 0) {
        head = head ? Buffer.concat([head, chunk]) : chunk;
        const end = head.indexOf(HEAD_END);
        if (end < 0) return;
        stream.status = Number(head.subarray(9, 12).toString());
        if (stream.status !== 200) {
          socket.destroy();
          resolve(false);
          return;
        }
        resolve(true);
        chunk = head.subarray(end + HEAD_END.length);
        head = null;
      }
      take(stream, chunk, at);
    });
    socket.on('close', () => {
      stream.closed = true;
      resolve(false);
    });
    socket.on('error', () => {
      stream.ending ??= 'socket error';
    });
  });
}

/** Opens every stream, `parallel` at a time; resolves to how many opened. */
async function openAll(message) {
  let next = 0;
  let opened = 0;
  const worker = async () => {
    while (next < message.clients.length) {
      const client = message.clients[next++];
      if (await open(message.base, client, message.plan)) opened++;
    }
  };
  await Promise.all(Array.from({ length: message.parallel ?? 50 }, worker));
  return opened;
}

function streamResult(total) {
  const perStream = streams.map((stream) => {
    let expected = 0;
    let missed = 0;
    for (let seq = 0; seq < total; seq++) {
      if (!visible(stream, seq)) continue;
      expected++;
      if (stream.seen[seq] !== 1) missed++;
    }
    return { ...stream, expected, missed };
  });
  const sum = (field) => perStream.reduce((s, x) => s + x[field], 0);
  const endings = {};
  for (const s of perStream) {
    const why = s.ending ?? (s.closed ? 'closed' : null);
    if (why !== null) endings[why] = (endings[why] ?? 0) + 1;
  }
  return {
    type: 'result',
    streams: perStream.length,
    expected: sum('expected'),
    received: sum('received'),
    distinct: sum('distinct'),
    missed: sum('missed'),
    streamsMissing: perStream.filter((s) => s.missed > 0).length,
    duplicates: sum('duplicates'),
    unexpected: sum('unexpected'),
    unreadable: sum('unreadable'),
    endings,
    histogram: histogram.sparse(),
  };
}

/** Poll clients: each reads what changed since the newest row it saw, once a second. */
async function poll(message) {
  const { base, clients, seconds, table } = message;
  const tally = { requests: 0, non2xx: 0, errors: 0, rows: 0, firstBad: null };
  const started = performance.now();
  const stopAt = started + seconds * 1000;
  const sinceOf = (ms) => new Date(ms).toISOString().replace('Z', '000Z');
  const one = (client, agent, since) =>
    new Promise((resolve) => {
      let settled = false;
      const settle = (newest) => {
        if (settled) return;
        settled = true;
        clearTimeout(deadline);
        resolve(newest);
      };
      const fail = () => {
        if (settled) return;
        tally.errors++;
        settle(null);
      };
      const filter = encodeURIComponent(`updated_at gt ${since}`);
      const sentAt = nowUs();
      const request = http.get(
        {
          host: base.host,
          port: base.port,
          path: `/table/${table}/read?$filter=${filter}&$orderby=updated_at`,
          agent,
          headers: client.token ? { authorization: `Bearer ${client.token}` } : {},
        },
        (response) => {
          const parts = [];
          response.on('data', (chunk) => parts.push(chunk));
          response.on('error', fail);
          response.on('end', () => {
            histogram.add(nowUs() - sentAt);
            tally.requests++;
            const text = Buffer.concat(parts).toString();
            if (response.statusCode !== 200) {
              tally.non2xx++;
              tally.firstBad ??= `${response.statusCode} ${text.slice(0, 200)}`;
              settle(null);
              return;
            }
            // Rows in updated_at order: the last one's is the newest, which the next poll asks
            // to be past. Counted and found in the text, not parsed (as the streams are).
            let rows = 0;
            let last = -1;
            for (
              let at = text.indexOf(UPDATED_AT);
              at >= 0;
              at = text.indexOf(UPDATED_AT, at + 1)
            ) {
              rows++;
              last = at;
            }
            tally.rows += rows;
            const start = last + UPDATED_AT.length;
            settle(last < 0 ? null : text.slice(start, text.indexOf('"', start)));
          });
        },
      );
      request.on('error', fail);
      // A poll not answered in time counts as an error; the client polls on.
      const deadline = setTimeout(() => {
        request.destroy();
        fail();
      }, POLL_TIMEOUT_MS);
    });
  await Promise.all(
    clients.map(async (client, index) => {
      const agent = new http.Agent({
        keepAlive: true,
        maxSockets: 1,
        localAddress: client.address,
      });
      // Spread over the second, so that the gateway sees a steady 1,000 a second, not bursts.
      let due = started + (1000 * index) / clients.length;
      let since = sinceOf(Date.now());
      for (;;) {
        const wait = due - performance.now();
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
        if (performance.now() >= stopAt) break;
        const newest = await one(client, agent, since);
        if (newest !== null) since = `${newest.replace(' ', 'T')}Z`;
        due += 1000;
      }
      agent.destroy();
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  return { type: 'polled', ...tally, seconds: elapsed, histogram: histogram.sparse() };
}

process.on('message', async (message) => {
  switch (message.type) {
    case 'stream': {
      const opened = await openAll(message);
      process.send({ type: 'ready', opened, statuses: streams.map((s) => s.status) });
      return;
    }
    case 'progress':
      process.send({ type: 'progress', distinct: streams.reduce((s, x) => s + x.distinct, 0) });
      return;
    case 'finish':
      process.send(streamResult(message.total));
      for (const socket of sockets) socket.destroy();
      return;
    case 'poll':
      process.send(await poll(message));
      return;
    case 'exit':
      process.exit(0);
  }
});
