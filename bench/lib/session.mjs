/**
 * The frame of a bench script that starts servers of its own (ab-cpu.mjs, after-big-read.mjs):
 * the bench database made afresh, a MySQL user for the servers and a temporary folder; afterwards,
 * also after an error, every server stopped, the user dropped and the folder removed.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  adminConfig,
  connectAdmin,
  createBenchDatabase,
  createBenchUser,
  dropBenchUser,
} from './database.mjs';
import { closeAgent } from './load.mjs';
import { stopAll } from './processes.mjs';

/**
 * `run({ db, tmp, admin })` inside the frame; `db` is the servers' login, `tmp` their folder,
 * `admin` the bench's own MySQL connection (for a scenario's setup).
 */
export async function benchSession(name, run) {
  const tmp = mkdtempSync(path.join(os.tmpdir(), `tablegate-${name}-`));
  const config = adminConfig();
  const admin = await connectAdmin(config);
  try {
    process.stderr.write('creating tablegate_bench.items (100,000 rows)…\n');
    await createBenchDatabase(admin);
    const db = { host: config.host, port: config.port, ...(await createBenchUser(admin)) };
    return await run({ db, tmp, admin });
  } finally {
    closeAgent();
    await stopAll().catch(() => {});
    await dropBenchUser(admin).catch(() => {});
    await admin.end().catch(() => {});
    rmSync(tmp, { recursive: true, force: true });
  }
}
