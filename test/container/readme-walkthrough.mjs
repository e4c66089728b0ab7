/**
 * Runs README.md's "Run with Docker" walk-through as printed (`npm run test:container`): the
 * second ```sh block of that section, command by command, in bash, and compares each output with
 * the `# …` lines printed under it (`…` stands for anything, `<stored name>` for the upload's).
 * `node readme-walkthrough.mjs start` prints the first block (what starts compose) instead.
 * Writes TOKEN and URL (the upload's accessURL) as shell assignments to $WALKTHROUGH_STATE.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const readme = readFileSync(path.join(import.meta.dirname, '../../README.md'), 'utf8');
const section = readme.split(/^## Run with Docker$/m)[1]?.split(/^## /m)[0];
if (!section) throw new Error('README.md has no "## Run with Docker" section');
const blocks = [...section.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1] ?? '');
if (blocks.length < 2) throw new Error('README "Run with Docker": expected two ```sh blocks');

/** A block as commands, each with the output printed under it (continuations joined). */
function commands(block) {
  const result = [];
  for (const line of block.split('\n')) {
    const last = result.at(-1);
    if (line.startsWith('#')) {
      if (last) last.expected.push(line.replace(/^#\s?/, ''));
    } else if (line.trim() === '') {
    } else if (last && (last.text.endsWith('\\') || /^\s*\|/.test(line))) {
      last.text += `\n${line}`;
    } else {
      result.push({ text: line.replace(/\s+#\s.*$/, ''), expected: [] });
    }
  }
  return result;
}

if (process.argv[2] === 'start') {
  for (const c of commands(blocks[0] ?? '')) console.log(c.text);
  process.exit(0);
}

const escapeRegExp = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
function pattern(expected) {
  const text = expected.map((l, i) => (i === 0 ? l : l.trimStart())).join('');
  const source = escapeRegExp(text).replaceAll('…', '.*').replaceAll('<stored name>', '[^"/]+');
  return new RegExp(`^${source}$`, 's');
}

const env = { ...process.env };
let stored;
let failures = 0;
for (const command of commands(blocks[1] ?? '')) {
  let text = command.text;
  if (stored) text = text.replace(/<stored name>\.\w+/g, stored);
  const assigned = /^([A-Z_]+)=\$\(/.exec(text)?.[1];
  const script = assigned ? `${text}\nprintf %s "$${assigned}"` : text;
  const run = spawnSync('bash', ['-o', 'pipefail', '-c', script], { env, encoding: 'utf8' });
  if (run.status !== 0) {
    console.log(`FAIL ${text}\n     exit ${run.status}: ${run.stderr}`);
    process.exit(1);
  }
  const output = run.stdout.trim();
  if (assigned) env[assigned] = output;
  // The stored name only: in auth mode the accessURL goes on with a signed link's `?exp=…&sig=…`.
  stored ??= /"accessURL":"[^"]*\/@\/([^"?]+)[?"]/.exec(output)?.[1];
  const ok = command.expected.length === 0 || pattern(command.expected).test(output);
  if (!ok) failures += 1;
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${text.split('\n')[0]}`);
  if (!ok)
    console.log(
      `     printed: ${command.expected.join('\n              ')}\n     got:     ${output}`,
    );
}
if (process.env.WALKTHROUGH_STATE) {
  const url = stored ? `http://localhost:8080/@/${stored}` : '';
  writeFileSync(process.env.WALKTHROUGH_STATE, `TOKEN='${env.TOKEN ?? ''}'\nURL='${url}'\n`);
}
if (failures > 0) {
  console.log(`readme-walkthrough: ${failures} command(s) did not answer as README.md prints`);
  process.exit(1);
}
