/**
 * `tablegate demo` on a machine with Node and Docker but no mariadbd or mysqld
 * (`npm run test:container`): the demo runs in a mount namespace where an empty tmpfs covers
 * /usr/sbin, with only node's directory on the PATH (needs root, as the container tier does).
 * It must start the compose file's mysql:8.4 in a container, say so in its banner, serve a read
 * through the API, and on SIGINT exit 0 with the container gone (`docker ps -a`).
 * Usage: node test/container/demo-container.mjs (after `npm run build`)
 */
import { execFileSync, spawn } from 'node:child_process';
import path from 'node:path';

const CLI = path.join(import.meta.dirname, '../../dist/cli.js');
const START_LIMIT_MS = 180_000;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
/** A timer that does not keep the process alive once the rest is done. */
const deadline = (ms) => new Promise((r) => setTimeout(r, ms).unref());
const docker = (...args) => execFileSync('docker', args, { encoding: 'utf8' }).trim();
function fail(message) {
  throw new Error(`demo-container: ${message}`);
}

const port = 18000 + (process.pid % 1000);
const child = spawn(
  'unshare',
  [
    '-m',
    'sh',
    '-c',
    'mount -t tmpfs none /usr/sbin && exec "$@"',
    'sh',
    process.execPath,
    CLI,
    'demo',
    '-o',
    String(port),
  ],
  { env: { ...process.env, PATH: path.dirname(process.execPath) } },
);
let stdout = '';
let stderr = '';
child.stdout.on('data', (d) => (stdout += d));
child.stderr.on('data', (d) => (stderr += d));
const exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));

let container = '';
try {
  const since = Date.now();
  while (!stdout.includes('Ctrl-C')) {
    if (child.exitCode !== null) fail(`the demo exited ${child.exitCode}: ${stderr}`);
    if (Date.now() - since > START_LIMIT_MS)
      fail(`no banner within ${START_LIMIT_MS} ms: ${stderr}`);
    await sleep(200);
  }
  console.log(`banner after ${((Date.now() - since) / 1000).toFixed(1)} s`);
  const first = stdout.split('\n')[0];
  const match =
    / on \S+ [\d.]+ \(Docker container ([0-9a-f]{12}) of mysql:8\.4, removed on exit\)$/.exec(
      first,
    );
  if (!match) fail(`the banner does not say it runs in a container: ${first}`);
  container = match[1];
  if (
    !stdout.includes(
      "Ctrl-C stops the gateway, removes the container and deletes the demo's files.",
    )
  )
    fail(`the banner's last line: ${stdout}`);
  if (docker('ps', '-q', '--no-trunc', '--filter', `id=${container}`) === '')
    fail(`container ${container} is not running`);
  const credentials =
    /-d '(\{"email"[^']+)'/.exec(stdout)?.[1] ?? fail('no credentials in the banner');
  const base = `http://127.0.0.1:${port}`;
  const login = await fetch(`${base}/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: credentials,
  });
  const { token } = await login.json();
  const read = await fetch(
    `${base}/table/products/read?$filter=category+eq+%27tea%27&$select=name&$orderby=id`,
    { headers: { authorization: `Bearer ${token}` } },
  );
  const rows = await read.json();
  const names = JSON.stringify(rows);
  if (
    read.status !== 200 ||
    !Array.isArray(rows) ||
    rows.length === 0 ||
    !names.includes('Green tea, 100 g')
  )
    fail(`read through the API: ${read.status} ${names}`);
  console.log(`read through the API: ${read.status} ${names}`);
  child.kill('SIGINT');
  const code = await Promise.race([exited, deadline(60_000).then(() => 'timeout')]);
  if (code !== 0) fail(`exit after SIGINT: ${code}; ${stderr}`);
  const left = docker('ps', '-a', '-q', '--filter', `id=${container}`);
  if (left !== '') fail(`container ${container} is still there after SIGINT`);
  console.log(`SIGINT: exit code 0, container ${container} removed`);
} finally {
  if (child.exitCode === null) child.kill('SIGKILL');
  if (container && docker('ps', '-a', '-q', '--filter', `id=${container}`) !== '') {
    docker('rm', '-f', container);
  }
}
