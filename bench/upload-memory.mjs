/**
 * Upload memory bench: starts the built gateway (dist/cli.js) with a temporary uploads directory,
 * streams one generated file of BENCH_UPLOAD_SIZE (default 1 GiB, never held in memory here) to
 * POST /upload, samples the server's RSS from /proc/<pid>/status meanwhile (VmHWM for the peak),
 * checks the stored file byte for byte (sha256), and prints time, throughput and memory.
 *
 *   npm run build && node bench/upload-memory.mjs
 *
 * Environment: BENCH_DB_HOST/PORT/USER/PASSWORD/NAME (127.0.0.1, 3306, root, '', test),
 * BENCH_UPLOAD_SIZE (bytes, default 1073741824), BENCH_RSS_TARGET_MIB (default 150).
 * Linux only (/proc). Exit code 1 when the peak RSS is over the target or the file is wrong.
 */
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createReadStream, existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const MiB = 1024 * 1024;
const env = process.env;
const SIZE = Number(env.BENCH_UPLOAD_SIZE ?? 1024 * MiB);
const TARGET_MIB = Number(env.BENCH_RSS_TARGET_MIB ?? 150);
const CHUNK = MiB;
const SAMPLE_MS = 20;
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const cli = path.join(root, 'dist', 'cli.js');

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** VmRSS and VmHWM of a process, in bytes. */
function memoryOf(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field) =>
    Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rss: kib('VmRSS') * 1024, hwm: kib('VmHWM') * 1024 };
}

const mib = (bytes) => (bytes / MiB).toFixed(1);

async function startGateway(port, uploadsDir) {
  const args = [
    cli,
    'run',
    '-h',
    env.BENCH_DB_HOST ?? '127.0.0.1',
    '-u',
    env.BENCH_DB_USER ?? 'root',
    '-p',
    env.BENCH_DB_PASSWORD ?? '',
    '-P',
    env.BENCH_DB_PORT ?? '3306',
    '-D',
    env.BENCH_DB_NAME ?? 'test',
    '-o',
    String(port),
    '--listen-host',
    '127.0.0.1',
    '--max-file-size',
    '2GiB',
    '--log-level',
    'warn',
    '--uploads-dir',
    uploadsDir,
  ];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stderr.on('data', (d) => {
    output += d;
  });
  await new Promise((resolve, reject) => {
    child.stdout.on('data', (d) => {
      output += d;
      if (output.includes('tablegate listening')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`gateway exited ${code}: ${output.trim()}`)));
  });
  return child;
}

/** Streams a multipart body with one generated file; resolves with the parsed answer. */
function upload(port, size, hash) {
  const boundary = `bench${randomBytes(12).toString('hex')}`;
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="files"; filename="big.bin"\r\n` +
      'Content-Type: application/octet-stream\r\n\r\n',
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const request = http.request({
    host: '127.0.0.1',
    port,
    method: 'POST',
    path: '/upload',
    headers: {
      'content-type': `multipart/form-data; boundary=${boundary}`,
      'content-length': head.length + size + tail.length,
    },
  });
  const answered = new Promise((resolve, reject) => {
    request.once('response', (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (d) => {
        text += d;
      });
      response.on('end', () => resolve({ status: response.statusCode, text }));
    });
    request.once('error', reject);
  });
  const sent = (async () => {
    request.write(head);
    // One random block, stamped with its index so no two chunks are alike.
    const block = randomBytes(CHUNK);
    for (let offset = 0, index = 0; offset < size; offset += CHUNK, index++) {
      const chunk = Buffer.from(block.subarray(0, Math.min(CHUNK, size - offset)));
      if (chunk.length >= 8) chunk.writeBigUInt64LE(BigInt(index), 0);
      hash.update(chunk);
      if (!request.write(chunk)) await once(request, 'drain');
    }
    request.end(tail);
  })();
  return Promise.all([answered, sent]).then(([answer]) => answer);
}

async function sha256OfFile(file) {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file, { highWaterMark: 4 * MiB })) hash.update(chunk);
  return hash.digest('hex');
}

async function main() {
  if (!existsSync(cli)) throw new Error(`${cli} is missing: run 'npm run build' first`);
  const uploadsDir = await mkdtemp(path.join(os.tmpdir(), 'tablegate-upload-bench-'));
  const port = await freePort();
  const gateway = await startGateway(port, uploadsDir);
  try {
    const idle = memoryOf(gateway.pid);
    let peakSampled = idle.rss;
    const sampler = setInterval(() => {
      try {
        peakSampled = Math.max(peakSampled, memoryOf(gateway.pid).rss);
      } catch {}
    }, SAMPLE_MS);
    const hash = createHash('sha256');
    const started = process.hrtime.bigint();
    let answer;
    try {
      answer = await upload(port, SIZE, hash);
    } finally {
      clearInterval(sampler);
    }
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const after = memoryOf(gateway.pid);
    if (answer.status !== 200) throw new Error(`upload answered ${answer.status}: ${answer.text}`);
    const record = JSON.parse(answer.text).data[0];
    const onDisk = (await stat(record.path)).size;
    const sameBytes = (await sha256OfFile(record.path)) === hash.digest('hex');

    const ok = sameBytes && onDisk === SIZE && after.hwm < TARGET_MIB * MiB;
    console.log(
      [
        `upload of ${mib(SIZE)} MiB to POST /upload (gateway pid ${gateway.pid}, Node ${process.version})`,
        `  time         ${seconds.toFixed(2)} s`,
        `  throughput   ${(SIZE / MiB / seconds).toFixed(1)} MiB/s`,
        `  RSS idle     ${mib(idle.rss)} MiB`,
        `  RSS sampled  ${mib(peakSampled)} MiB peak (every ${SAMPLE_MS} ms)`,
        `  VmHWM        ${mib(after.hwm)} MiB (peak since start; target < ${TARGET_MIB} MiB)`,
        `  stored       ${onDisk} bytes, sha256 ${sameBytes ? 'matches' : 'DIFFERS'}`,
        `  result       ${ok ? 'PASS' : 'FAIL'}`,
      ].join('\n'),
    );
    process.exitCode = ok ? 0 : 1;
  } finally {
    if (gateway.exitCode === null && gateway.signalCode === null) {
      gateway.kill('SIGTERM');
      await once(gateway, 'exit');
    }
    await rm(uploadsDir, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(`upload-memory: ${error.message}`);
  process.exitCode = 1;
});
