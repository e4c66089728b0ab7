/**
 * The HTTP clients of the bench: autocannon for the load scenarios (every response's latency and
 * status recorded here, so that rounds can be merged exactly), one timed GET at a time for the
 * big read, and a streamed multipart upload whose body is generated chunk by chunk.
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import autocannon from 'autocannon';

/** Latencies (ms), responses, non-2xx and socket errors, merged over several runs. */
export class LoadTally {
  constructor() {
    this.latencies = [];
    this.responses = 0;
    this.non2xx = 0;
    this.errors = 0;
    this.seconds = 0;
    /** CPU seconds the server used during the measured runs (run.mjs adds them). */
    this.cpu = 0;
    this.firstBadStatus = null;
  }

  get rps() {
    return this.seconds > 0 ? this.responses / this.seconds : 0;
  }

  /** Throws when any answer was not a 2xx or a socket failed: its figures would mislead. */
  requireClean(serverKey) {
    if (this.non2xx + this.errors > 0) {
      throw new Error(`${serverKey}: ${this.non2xx} non-2xx, ${this.errors} socket errors`);
    }
  }

  percentile(p) {
    if (this.latencies.length === 0) return null;
    const sorted = Float64Array.from(this.latencies).sort();
    const index = Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1);
    return sorted[Math.max(0, index)];
  }
}

/**
 * `seconds` of load with `connections` connections, or exactly `amount` requests when it is
 * given (then the run lasts until the last one is answered); `next()` gives each request
 * ({ method, path, headers, body }). Adds to `tally` unless it is null (warm-up). An answer not
 * complete after `timeoutSeconds` is a socket error.
 */
export function runLoad({ base, connections, seconds, amount, next, tally, timeoutSeconds = 10 }) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const instance = autocannon(
      {
        url: base,
        connections,
        ...(amount === undefined ? { duration: seconds } : { amount }),
        timeout: timeoutSeconds,
        requests: [{ ...next(), setupRequest: (request) => ({ ...request, ...next() }) }],
      },
      (error, result) => {
        if (error) return reject(error);
        if (tally) {
          tally.seconds += (performance.now() - started) / 1000;
          tally.errors += result.errors;
        }
        resolve(result);
      },
    );
    if (tally) {
      instance.on('response', (_client, status, _bytes, ms) => {
        tally.responses++;
        tally.latencies.push(ms);
        if (status < 200 || status > 299) {
          tally.non2xx++;
          tally.firstBadStatus ??= status;
        }
      });
    }
  });
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

/**
 * One GET read to its end: status, time to last byte (ms), bytes (as sent: nothing is decoded),
 * and the text if asked for. One at a time on the module's agent, unless `via` is another.
 */
export function timedGet(
  base,
  path,
  { keepBody = false, timeoutMs = 120_000, headers = {}, via = agent } = {},
) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const options = { agent: via, headers, timeout: timeoutMs };
    const request = http.get(base + path, options, (response) => {
      const chunks = [];
      let bytes = 0;
      response.on('data', (chunk) => {
        bytes += chunk.length;
        if (keepBody) chunks.push(chunk);
      });
      response.on('end', () =>
        resolve({
          status: response.statusCode,
          ms: performance.now() - started,
          bytes,
          text: keepBody ? Buffer.concat(chunks).toString('utf8') : undefined,
        }),
      );
      response.on('error', reject);
    });
    request.on('timeout', () => request.destroy(new Error(`no answer in ${timeoutMs} ms`)));
    request.on('error', reject);
  });
}

export function closeAgent() {
  agent.destroy();
}

const CHUNK_BYTES = 1024 * 1024;

/** Resolves on 'drain' or 'close', whichever comes first, leaving no listener behind. */
function drained(request) {
  return new Promise((resolve) => {
    const done = () => {
      request.off('drain', done);
      request.off('close', done);
      resolve();
    };
    request.on('drain', done);
    request.on('close', done);
  });
}

/**
 * POSTs a multipart/form-data body with one file part of `size` bytes under `field`. The file's
 * bytes are one random 1 MiB chunk written again and again (never modified, so the same buffer
 * may be queued many times), with back-pressure: nothing close to `size` is ever in memory.
 */
export function uploadFile(base, path, { field, size, timeoutMs = 600_000 }) {
  const boundary = `----tablegate-bench-${randomBytes(8).toString('hex')}`;
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="${field}"; filename="bench.bin"\r\n` +
      'Content-Type: application/octet-stream\r\n\r\n',
  );
  const end = Buffer.from(`\r\n--${boundary}--\r\n`);
  const chunk = randomBytes(CHUNK_BYTES);
  return new Promise((resolve, reject) => {
    const started = performance.now();
    let answered = false;
    const request = http.request(base + path, {
      method: 'POST',
      agent: false,
      timeout: timeoutMs,
      headers: {
        'content-type': `multipart/form-data; boundary=${boundary}`,
        'content-length': head.length + size + end.length,
      },
    });
    request.on('timeout', () => request.destroy(new Error(`no answer in ${timeoutMs} ms`)));
    request.on('error', (error) => {
      if (!answered) reject(error);
    });
    request.on('response', (response) => {
      answered = true;
      const chunks = [];
      response.on('data', (c) => chunks.push(c));
      response.on('end', () =>
        resolve({
          status: response.statusCode,
          ms: performance.now() - started,
          text: Buffer.concat(chunks).toString('utf8'),
          framing: head.length + end.length,
        }),
      );
      response.on('error', reject);
    });
    (async () => {
      request.write(head);
      let left = size;
      while (left > 0 && !answered && !request.destroyed) {
        const piece = left >= CHUNK_BYTES ? chunk : chunk.subarray(0, left);
        left -= piece.length;
        if (!request.write(piece)) await drained(request);
      }
      // An early answer (an error) ends the upload; the server may close the connection.
      if (!answered && !request.destroyed) request.end(end);
    })().catch((error) => {
      if (!answered) reject(error);
    });
  });
}
