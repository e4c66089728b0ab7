/**
 * Every child process the bench starts goes through here, so that all of them are stopped on
 * the way out: normally (stopChild), on an error (stopAll in a finally), on Ctrl-C, and as a last
 * resort in the process 'exit' handler (SIGKILL, synchronous).
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, openSync, readFileSync } from 'node:fs';

const children = new Set();

process.on('exit', () => {
  for (const child of children) {
    try {
      child.kill('SIGKILL');
    } catch {}
  }
});

/**
 * Starts a child whose stdout and stderr go to a log file (not through a pipe, so a chatty
 * access log costs the server a write, never this process a read); `ipc` gives a Node child
 * the message channel of `child.send` (the feed bench's writer and clients report through it).
 */
export function startChild(command, args, { cwd, env, logFile, ipc = false }) {
  const fd = openSync(logFile, 'a');
  let child;
  try {
    child = spawn(command, args, { cwd, env, stdio: ['ignore', fd, fd, ...(ipc ? ['ipc'] : [])] });
  } finally {
    closeSync(fd);
  }
  children.add(child);
  child.exited = once(child, 'exit').then(([code, signal]) => {
    children.delete(child);
    return { code, signal };
  });
  child.on('error', () => children.delete(child));
  return child;
}

/** Runs a command to completion (npm install), its output in a log file; throws on failure. */
export async function runToEnd(command, args, options) {
  const child = startChild(command, args, options);
  const { code, signal } = await child.exited;
  if (code !== 0) {
    throw new Error(
      `${command} ${args.join(' ')} failed (${signal ?? `exit ${code}`}): ${tail(options.logFile)}`,
    );
  }
}

/** SIGINT (or the given signal), then SIGKILL after `graceMs`. Resolves when the child is gone. */
export async function stopChild(child, signal = 'SIGTERM', graceMs = 5000) {
  if (child.exitCode !== null || child.signalCode !== null) return child.exited;
  child.kill(signal);
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  try {
    return await child.exited;
  } finally {
    clearTimeout(timer);
  }
}

export async function stopAll() {
  await Promise.all([...children].map((child) => stopChild(child)));
}

/** The last lines of a log file, for an error message. */
export function tail(file, lines = 8) {
  try {
    return readFileSync(file, 'utf8').trim().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

/**
 * Starts the built gateway (`cli`) in `mode` (`run` or `run auth`) on a free loopback port,
 * configured from the environment, with `home` as HOME; resolves when it prints its start line.
 * `nodeArgs` go to node before the script (`--cpu-prof`, `--import`); `ipc` opens the message
 * channel (bench/lib/loop-gaps.mjs answers through it).
 */
export async function startGatewayProcess(
  cli,
  { admin, database, home, auth = false, nodeArgs = [], ipc = false },
) {
  const child = spawn(
    process.execPath,
    [
      ...nodeArgs,
      cli,
      'run',
      ...(auth ? ['auth'] : []),
      '-h',
      admin.host,
      '-u',
      admin.user,
      '-P',
      String(admin.port),
    ],
    {
      env: {
        ...process.env,
        HOME: home,
        TABLEGATE_DB_PASSWORD: admin.password,
        TABLEGATE_DB_NAME: database,
        TABLEGATE_LISTEN_PORT: '0',
        TABLEGATE_LISTEN_HOST: '127.0.0.1',
        TABLEGATE_LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'inherit', ...(ipc ? ['ipc'] : [])],
    },
  );
  const url = await new Promise((resolve, reject) => {
    let seen = '';
    child.stdout.on('data', (chunk) => {
      seen += chunk;
      const match = /listening on (http:\/\/\S+)/.exec(seen);
      if (match) resolve(match[1].replace('localhost', '127.0.0.1'));
    });
    child.on('exit', (code) => reject(new Error(`tablegate exited with ${code}`)));
  });
  return { child, url };
}
