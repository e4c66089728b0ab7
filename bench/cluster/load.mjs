/**
 * The drill's mixed load and its ledger. Workers send, through the HTTP load balancer, reads with
 * `$filter`, point reads of their own rows, single and batch creates, updates of their own rows,
 * logins and small uploads; every request is recorded with its start, end, phase and outcome, and
 * every write with what it wrote, so that the end can check the database against what the
 * clients were told: each acknowledged row present exactly once on every node, each row's final
 * value the last acknowledged one (or a later attempt whose answer was lost).
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { seededRandom } from '../lib/scenarios.mjs';

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

/** One HTTP request; never rejects: a socket error or timeout is status 0. */
export function send(
  base,
  { method = 'GET', path, headers = {}, body, timeoutMs = 30_000, localAddress },
) {
  return new Promise((resolve) => {
    const url = new URL(path, base);
    const payload =
      body === undefined ? undefined : Buffer.isBuffer(body) ? body : JSON.stringify(body);
    const request = http.request(
      url,
      {
        method,
        agent,
        localAddress,
        headers: {
          ...(payload && !Buffer.isBuffer(body) ? { 'content-type': 'application/json' } : {}),
          ...(payload ? { 'content-length': Buffer.byteLength(payload) } : {}),
          ...headers,
        },
        timeout: timeoutMs,
      },
      (response) => {
        const chunks = [];
        response.on('data', (chunk) => chunks.push(chunk));
        response.on('end', () => {
          const raw = Buffer.concat(chunks);
          let json = null;
          try {
            json = JSON.parse(raw.toString('utf8'));
          } catch {}
          resolve({ status: response.statusCode ?? 0, json, raw, headers: response.headers });
        });
        response.on('error', (error) => resolve({ status: 0, error: error.message }));
      },
    );
    request.on('timeout', () => request.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    request.on('error', (error) => resolve({ status: 0, error: error.message }));
    request.end(payload);
  });
}

export function closeLoadAgent() {
  agent.destroy();
}

function multipart(name, content) {
  const boundary = `drill${randomBytes(8).toString('hex')}`;
  const body = Buffer.concat([
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="files"; filename="${name}"\r\n` +
        'Content-Type: text/plain\r\n\r\n',
    ),
    content,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  return { body, type: `multipart/form-data; boundary=${boundary}` };
}

/** Request kinds and their weights in the mix. */
const MIX = [
  ['read-filter', 33],
  ['read-own', 20],
  ['create', 15],
  ['create-batch', 10],
  ['update', 15],
  ['login', 5],
  ['upload', 2],
  ['write-then-read', 5],
];
const BATCH = 5;

export class Ledger {
  constructor() {
    this.requests = [];
    /** ref → 'acked' | 'failed' (the answer was an error or never came) */
    this.refs = new Map();
    /** id → [{ qty, acked }] in the order one worker sent them */
    this.updates = new Map();
    this.uploads = [];
    /** Point reads of a row already acknowledged as created that found nothing. */
    this.staleReads = [];
    /** write-then-read probes: a create through one gateway, at once a read through another. */
    this.probes = [];
    this.phase = 'start';
  }

  record(kind, started, result) {
    const ended = performance.now();
    const ok = result.status >= 200 && result.status < 300;
    this.requests.push({
      kind,
      phase: this.phase,
      started,
      ended,
      status: result.status,
      ok,
      code: result.json?.code ?? result.error,
    });
    return ok;
  }
}

export class Worker {
  /**
   * `gateways`: the gateways' own URLs, for the write-then-read probe; set only while every
   * gateway is up (the probe goes around the load balancer).
   */
  constructor(index, { base, ledger, credentials, seed }) {
    this.gateways = null;
    // Each client from an address of its own (all of 127/8 is this machine), as real clients
    // are: the gateways' per-client limits then count each one alone (HAProxy forwards it).
    this.address = `127.0.0.${10 + index}`;
    this.index = index;
    this.base = base;
    this.ledger = ledger;
    this.credentials = credentials;
    this.random = seededRandom(seed + index);
    this.ownIds = [];
    this.token = null;
    this.running = false;
    this.sequence = 0;
  }

  pick() {
    const total = MIX.reduce((sum, [, weight]) => sum + weight, 0);
    let draw = this.random() * total;
    for (const [kind, weight] of MIX) {
      draw -= weight;
      if (draw < 0) return kind;
    }
    return MIX[0][0];
  }

  nextRef() {
    this.sequence += 1;
    return `w${this.index}-${this.sequence}-${randomBytes(3).toString('hex')}`;
  }

  get auth() {
    return { authorization: `Bearer ${this.token}` };
  }

  async login() {
    const started = performance.now();
    const result = await send(this.base, {
      method: 'POST',
      path: '/auth/login',
      body: this.credentials,
      localAddress: this.address,
    });
    if (this.ledger.record('login', started, result)) this.token = result.json?.token ?? null;
    return result;
  }

  async step() {
    let kind = this.pick();
    if ((kind === 'update' || kind === 'read-own') && this.ownIds.length === 0) kind = 'create';
    if (kind === 'write-then-read' && !this.gateways) kind = 'read-filter';
    const started = performance.now();
    switch (kind) {
      case 'login':
        await this.login();
        return;
      case 'read-filter': {
        const qty = Math.floor(this.random() * 900);
        const path =
          `/table/events/read?$filter=${encodeURIComponent(`worker eq ${this.index} and qty ge ${qty}`)}` +
          '&$orderby=id%20desc&$top=20';
        this.ledger.record(
          kind,
          started,
          await send(this.base, { path, headers: this.auth, localAddress: this.address }),
        );
        return;
      }
      case 'read-own': {
        const id = this.ownIds[Math.floor(this.random() * this.ownIds.length)];
        const path = `/table/events/read?$filter=${encodeURIComponent(`id eq ${id}`)}`;
        const result = await send(this.base, {
          path,
          headers: this.auth,
          localAddress: this.address,
        });
        if (
          this.ledger.record(kind, started, result) &&
          Array.isArray(result.json) &&
          result.json.length === 0
        ) {
          this.ledger.staleReads.push({ id, at: started, phase: this.ledger.phase });
        }
        return;
      }
      case 'create':
      case 'create-batch': {
        const count = kind === 'create' ? 1 : BATCH;
        const rows = Array.from({ length: count }, () => ({
          ref: this.nextRef(),
          worker: this.index,
          qty: Math.floor(this.random() * 1000),
          note: 'drill',
        }));
        const result = await send(this.base, {
          method: 'POST',
          path: '/table/events/create',
          headers: this.auth,
          localAddress: this.address,
          body: kind === 'create' ? rows[0] : rows,
        });
        const ok = this.ledger.record(kind, started, result);
        for (const row of rows) this.ledger.refs.set(row.ref, ok ? 'acked' : 'failed');
        if (ok && kind === 'create' && typeof result.json?.insertId === 'number') {
          this.ownIds.push(result.json.insertId);
          this.ledger.updates.set(result.json.insertId, [{ qty: rows[0].qty, acked: true }]);
        }
        return;
      }
      case 'update': {
        const id = this.ownIds[Math.floor(this.random() * this.ownIds.length)];
        const qty = 1000 + Math.floor(this.random() * 100_000);
        const result = await send(this.base, {
          method: 'PUT',
          path: `/table/events/update(id,${id})`,
          headers: this.auth,
          localAddress: this.address,
          body: { qty },
        });
        const ok = this.ledger.record(kind, started, result);
        this.ledger.updates.get(id)?.push({ qty, acked: ok && result.json?.affectedRows === 1 });
        return;
      }
      case 'write-then-read': {
        // Read-your-writes across gateways (and so across the nodes their connections reach):
        // the row just acknowledged by one gateway, asked for at once from another.
        const from = Math.floor(this.random() * this.gateways.length);
        const to =
          (from + 1 + Math.floor(this.random() * (this.gateways.length - 1))) %
          this.gateways.length;
        const row = { ref: this.nextRef(), worker: this.index, qty: 0, note: 'probe' };
        const created = await send(this.gateways[from], {
          method: 'POST',
          path: '/table/events/create',
          headers: this.auth,
          localAddress: this.address,
          body: row,
        });
        const ok = this.ledger.record('create', started, created);
        this.ledger.refs.set(row.ref, ok ? 'acked' : 'failed');
        if (!ok) return;
        const id = created.json?.insertId;
        const readStarted = performance.now();
        const read = await send(this.gateways[to], {
          path: `/table/events/read?$filter=${encodeURIComponent(`id eq ${id}`)}`,
          headers: this.auth,
          localAddress: this.address,
        });
        if (this.ledger.record('read-own', readStarted, read)) {
          this.ledger.probes.push({ phase: this.ledger.phase, found: read.json?.length === 1 });
        }
        return;
      }
      case 'upload': {
        const content = randomBytes(2048);
        const { body, type } = multipart(`drill-${this.index}.bin`, content);
        const result = await send(this.base, {
          method: 'POST',
          path: '/upload',
          headers: { ...this.auth, 'content-type': type },
          localAddress: this.address,
          body,
        });
        if (this.ledger.record(kind, started, result)) {
          this.ledger.uploads.push({ filename: result.json?.data?.[0]?.filename, content });
        }
        return;
      }
    }
  }

  /** Steps until stop() (a worker's requests are sequential: its updates are ordered). */
  async loop() {
    this.running = true;
    while (this.running) await this.step();
  }

  stop() {
    this.running = false;
  }
}
