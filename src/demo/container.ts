/**
 * The demo's database in a Docker container, for machines with no mariadbd or mysqld but a
 * Docker engine: the image docker-compose.yml runs, root with an empty password, port 3306
 * published on a free port of 127.0.0.1, the binary log on for the change feed, removed when
 * stopped (docs/configuration.md, "Try it").
 * The `docker` CLI does the talking, so DOCKER_HOST and Docker contexts work as they do for it.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import mysql from 'mysql2/promise';
import { binlogArgs } from './private-server.js';

const run = promisify(execFile);

/** The `db` service's image in docker-compose.yml (a test checks that they agree). */
export const DEMO_IMAGE = 'mysql:8.4';

/** A first start initialises the data directory; the official image takes up to a minute. */
const READY_LIMIT_MS = 180_000;

export interface DemoContainer {
  readonly id: string;
  readonly host: string;
  readonly port: number;
  /** `docker rm -f`: stops it and deletes its data. */
  destroy(): Promise<void>;
}

/** True when a Docker engine answers within a few seconds. */
export async function dockerAnswers(): Promise<boolean> {
  try {
    const { stdout } = await run('docker', ['version', '--format', '{{.Server.Version}}'], {
      timeout: 5_000,
    });
    return stdout.trim() !== '';
  } catch {
    return false;
  }
}

/**
 * Starts the container and waits until root can log in over TCP. `cancelled` is polled while
 * waiting (Ctrl-C during start-up); on any failure the container is removed before the throw.
 */
export async function startContainer(cancelled: () => boolean): Promise<DemoContainer> {
  const { stdout } = await run(
    'docker',
    [
      'run',
      '-d',
      '--rm',
      '--label',
      'dev.tablegate.demo=true',
      '-e',
      'MYSQL_ALLOW_EMPTY_PASSWORD=yes',
      '-e',
      'MYSQL_ROOT_HOST=%',
      '-p',
      '127.0.0.1::3306',
      DEMO_IMAGE,
      // MySQL 8.4 has the binary log on as the change feed needs it; said anyway, for an image
      // whose defaults differ (the offline stand-in, scripts/offline-images.sh, is MariaDB).
      ...binlogArgs(),
    ],
    // The image may have to be pulled first.
    { timeout: 600_000 },
  );
  const id = stdout.trim();
  const destroy = async () => {
    await run('docker', ['rm', '-f', '-v', id], { timeout: 60_000 }).catch(() => {});
  };
  try {
    const { stdout: published } = await run('docker', ['port', id, '3306/tcp'], {
      timeout: 10_000,
    });
    // `127.0.0.1:49153` (one line per address).
    const match = /^127\.0\.0\.1:(\d+)$/m.exec(published.trim());
    if (!match) throw new Error(`unexpected \`docker port\` answer: ${published.trim()}`);
    const port = Number(match[1]);
    await waitForRoot(id, port, cancelled);
    return { id, host: '127.0.0.1', port, destroy };
  } catch (error) {
    await destroy();
    throw error;
  }
}

async function waitForRoot(id: string, port: number, cancelled: () => boolean): Promise<void> {
  const deadline = Date.now() + READY_LIMIT_MS;
  let lastError: unknown;
  let polls = 0;
  while (Date.now() < deadline && !cancelled()) {
    try {
      const connection = await mysql.createConnection({
        host: '127.0.0.1',
        port,
        user: 'root',
        password: '',
        connectTimeout: 2_000,
      });
      await connection.end();
      return;
    } catch (error) {
      lastError = error;
    }
    polls += 1;
    // Every few seconds: a container that stopped (--rm: it is gone) will never answer.
    if (polls % 10 === 0) {
      const { stdout } = await run('docker', ['inspect', '-f', '{{.State.Running}}', id], {
        timeout: 10_000,
      }).catch(() => ({ stdout: 'false' }));
      if (stdout.trim() !== 'true') throw new Error(`the ${DEMO_IMAGE} container stopped`);
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  if (cancelled()) throw new Error('interrupted');
  throw new Error(
    `the ${DEMO_IMAGE} container did not answer within ${READY_LIMIT_MS / 1000} s: ${String(lastError)}`,
  );
}
