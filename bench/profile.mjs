#!/usr/bin/env node
/**
 * CPU profile of tablegate under scenario (a), one row by primary key (or the load scenario
 * BENCH_PROFILE_SCENARIO names): starts dist/cli.js with `node --cpu-prof`, warms it up, loads it
 * for BENCH_PROFILE_SECONDS (10), stops it with SIGINT (the profile is written as the process
 * exits, into BENCH_PROFILE_DIR or the current directory) and prints the summary of
 * bench/summarize-profile.mjs.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  adminConfig,
  connectAdmin,
  createBenchDatabase,
  createBenchUser,
  dropBenchUser,
} from './lib/database.mjs';
import { LoadTally, runLoad } from './lib/load.mjs';
import { stopAll, stopChild } from './lib/processes.mjs';
import { DIALECTS, SCENARIOS, seededRandom } from './lib/scenarios.mjs';
import { SERVERS } from './lib/servers.mjs';
import { summarize } from './summarize-profile.mjs';

const seconds = Number(process.env.BENCH_PROFILE_SECONDS ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 32);
const outDir = path.resolve(process.env.BENCH_PROFILE_DIR ?? process.cwd());
const log = (text) => process.stderr.write(`${text}\n`);

const scenarioId = process.env.BENCH_PROFILE_SCENARIO ?? 'a';
const scenario = SCENARIOS.find((s) => s.id === scenarioId && s.kind === 'load');
if (!scenario) {
  process.stderr.write(`BENCH_PROFILE_SCENARIO must name a load scenario (a, b, c, e, f, h, i)\n`);
  process.exit(2);
}
// BENCH_PROFILE_SERVER=floor profiles the floor under the same load, for comparison.
const serverKey = process.env.BENCH_PROFILE_SERVER ?? 'tablegate';
// An auth-mode server (tablegate-auth, floor-auth) brings its own dialect, with its token.
let dialect = DIALECTS[serverKey];
const next = (seed) => {
  const random = seededRandom(seed);
  return () => scenario.request(dialect, random);
};

const tmp = mkdtempSync(path.join(os.tmpdir(), 'tablegate-profile-'));
const config = adminConfig();
const admin = await connectAdmin(config);
let code = 1;
try {
  log('creating tablegate_bench.items (100,000 rows)…');
  await createBenchDatabase(admin);
  await scenario.setup?.(admin);
  const credentials = await createBenchUser(admin);
  const db = { host: config.host, port: config.port, ...credentials };
  const before = Date.now();
  const server = await SERVERS.find((s) => s.key === serverKey).start({
    db,
    tmp,
    poolSize: 10,
    extraNodeArgs: ['--cpu-prof', '--cpu-prof-dir', outDir],
    cwd: outDir,
  });
  dialect = server.dialect ?? dialect;
  log('warm-up 2 s…');
  await runLoad({ base: server.base, connections, seconds: 2, next: next(999), tally: null });
  log(`profiling ${seconds} s of scenario (${scenario.id})…`);
  const tally = new LoadTally();
  await runLoad({ base: server.base, connections, seconds, next: next(1), tally });
  log(
    `${tally.responses} requests, ${Math.round(tally.rps)} req/s, ${tally.non2xx} non-2xx, ${tally.errors} errors`,
  );
  const { code: exitCode, signal } = await stopChild(server.child, 'SIGINT', 15_000);
  if (exitCode !== 0) log(`${serverKey} exited with ${signal ?? exitCode}`);
  const written = readdirSync(outDir)
    .filter((f) => f.endsWith('.cpuprofile'))
    .map((f) => path.join(outDir, f))
    .filter((f) => statSync(f).mtimeMs >= before)
    .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0];
  if (!written) throw new Error(`no .cpuprofile was written to ${outDir}`);
  log(`profile: ${written}`);
  process.stdout.write(
    `${serverKey}, scenario (${scenario.id}) at ${Math.round(tally.rps)} req/s, ${connections} connections, ${seconds} s ` +
      '(plus start-up and a 2 s warm-up).\n\n',
  );
  process.stdout.write(summarize(JSON.parse(readFileSync(written, 'utf8'))));
  code = 0;
} catch (error) {
  log(`profile failed: ${error.stack ?? error}`);
} finally {
  await stopAll();
  await dropBenchUser(admin).catch(() => {});
  await admin.end().catch(() => {});
  rmSync(tmp, { recursive: true, force: true });
}
process.exit(code);
