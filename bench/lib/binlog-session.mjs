/**
 * The frame of a bench that needs the change feed (bench/cache.mjs, bench/cache-ab.mjs): a private
 * MariaDB with the binary log on (the bench database on :3306 has it off), the bench's `items`
 * table of 100,000 rows on it, and a temporary folder; afterwards, also after an error, every
 * server stopped, the database destroyed and the folder removed.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import mysql from 'mysql2/promise';
import { createBenchDatabase } from './database.mjs';
import { stopAll } from './processes.mjs';
import { CLI } from './servers.mjs';

/**
 * `run({ db, admin, tmp, mysqldPid })` inside the frame: `db` is the servers' login, `admin` a
 * connection of the bench's own, `mysqldPid` the database server's process (for its CPU time).
 */
export async function binlogSession(name, run) {
  const { binlogArgs, startPrivateServer } = await import(
    pathToFileURL(path.join(path.dirname(CLI), 'demo', 'private-server.js')).href
  );
  const log = (text) => process.stderr.write(`${text}\n`);
  const tmp = mkdtempSync(path.join(os.tmpdir(), `tablegate-${name}-`));
  let mariadb = null;
  let admin = null;
  try {
    log(`${name}: starting a private MariaDB with the binary log on…`);
    mariadb = await startPrivateServer(undefined, binlogArgs());
    const db = {
      host: mariadb.host,
      port: mariadb.port,
      user: mariadb.user,
      password: mariadb.password,
    };
    admin = await mysql.createConnection(db);
    log(`${name}: creating items (100,000 rows)…`);
    await createBenchDatabase(admin);
    const mysqldPid = Number(readFileSync(path.join(mariadb.dir, 'mysql.pid'), 'utf8').trim());
    return await run({ db, admin, tmp, mysqldPid });
  } finally {
    await stopAll().catch(() => {});
    await admin?.end().catch(() => {});
    await mariadb?.destroy().catch(() => {});
    rmSync(tmp, { recursive: true, force: true, maxRetries: 2 });
  }
}
