#!/usr/bin/env node
/**
 * Summarises a V8 .cpuprofile (from `node --cpu-prof`): the top functions by self time, self time
 * by package (tablegate's dist/, each node_modules package, Node internals, GC), and tablegate's
 * own functions by inclusive time. Usage: node bench/summarize-profile.mjs <file> [top=10]
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

function where(callFrame) {
  const url = callFrame.url ?? '';
  if (!url) return '';
  let file = url.startsWith('file://') ? fileURLToPath(url) : url;
  const modules = file.lastIndexOf('/node_modules/');
  if (modules !== -1) file = file.slice(modules + '/node_modules/'.length);
  else if (file.includes('/dist/')) file = file.slice(file.lastIndexOf('/dist/') + 1);
  return `${file}:${callFrame.lineNumber + 1}`;
}

/** Which package a frame belongs to. */
function packageOf(callFrame) {
  const url = callFrame.url ?? '';
  const name = callFrame.functionName;
  if (!url) return name.startsWith('(') ? name : '(native / V8 builtins)';
  if (url.startsWith('node:')) return 'node core';
  const match = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (match) return match[1];
  if (url.includes('/dist/')) return 'tablegate (dist/)';
  return url;
}

function label(callFrame) {
  return callFrame.functionName || '(anonymous)';
}

export function summarize(profile, top = 10) {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const counts = new Map();
  for (const id of profile.samples) counts.set(id, (counts.get(id) ?? 0) + 1);
  const total = profile.samples.length;
  const ms = (profile.endTime - profile.startTime) / 1000;
  const perSample = ms / total;

  const selfByFunction = new Map();
  const selfByPackage = new Map();
  for (const [id, count] of counts) {
    const { callFrame } = byId.get(id);
    const key = `${label(callFrame)}\u0000${where(callFrame)}`;
    selfByFunction.set(key, (selfByFunction.get(key) ?? 0) + count);
    const pkg = packageOf(callFrame);
    selfByPackage.set(pkg, (selfByPackage.get(pkg) ?? 0) + count);
  }
  const idle =
    counts.get(profile.nodes.find((n) => n.callFrame.functionName === '(idle)')?.id) ?? 0;

  // Inclusive samples of tablegate's own functions, each counted once per stack (recursion).
  const inclusive = new Map();
  const parents = new Map();
  for (const node of profile.nodes)
    for (const child of node.children ?? []) parents.set(child, node.id);
  for (const [id, count] of counts) {
    const seen = new Set();
    for (let at = id; at !== undefined; at = parents.get(at)) {
      const { callFrame } = byId.get(at);
      if (!(callFrame.url ?? '').includes('/dist/')) continue;
      const key = `${label(callFrame)}\u0000${where(callFrame)}`;
      if (seen.has(key)) continue;
      seen.add(key);
      inclusive.set(key, (inclusive.get(key) ?? 0) + count);
    }
  }

  const pct = (count) => `${((100 * count) / total).toFixed(1)} %`;
  const busy = (count) => `${((100 * count) / (total - idle)).toFixed(1)} %`;
  const sorted = (map) => [...map].sort((a, b) => b[1] - a[1]);
  const lines = [
    `Profile: ${(ms / 1000).toFixed(1)} s, ${total} samples, ${pct(idle)} idle. ` +
      '"% busy" leaves the idle samples out.',
    '',
    '| # | self | % busy | self ms | function | where |',
    '|--:|--:|--:|--:|---|---|',
  ];
  for (const [i, [key, count]] of sorted(selfByFunction).slice(0, top).entries()) {
    const [name, at] = key.split('\u0000');
    lines.push(
      `| ${i + 1} | ${pct(count)} | ${busy(count)} | ${Math.round(count * perSample)} | ` +
        `\`${name}\` | ${at ? `\`${at}\`` : ''} |`,
    );
  }
  // Native frames (socket writes above all) are sampled by wall clock: on a busy machine they
  // include the time the thread waited to run again, so JavaScript is also ranked on its own.
  lines.push(
    '',
    'JavaScript only (frames with source; native, idle, GC and program left out):',
    '',
    '| # | self | % busy | function | where |',
    '|--:|--:|--:|---|---|',
  );
  const javascript = sorted(selfByFunction).filter(([key]) => key.split('\u0000')[1] !== '');
  for (const [i, [key, count]] of javascript.slice(0, top).entries()) {
    const [name, at] = key.split('\u0000');
    lines.push(`| ${i + 1} | ${pct(count)} | ${busy(count)} | \`${name}\` | \`${at}\` |`);
  }
  lines.push('', 'Self time by package:', '', '| package | self | % busy |', '|---|--:|--:|');
  for (const [pkg, count] of sorted(selfByPackage).slice(0, 14)) {
    lines.push(`| ${pkg} | ${pct(count)} | ${busy(count)} |`);
  }
  lines.push(
    '',
    "tablegate's own functions by inclusive time (self + callees):",
    '',
    '| function | inclusive | where |',
    '|---|--:|---|',
  );
  for (const [key, count] of sorted(inclusive).slice(0, top)) {
    const [name, at] = key.split('\u0000');
    lines.push(`| \`${name}\` | ${pct(count)} | \`${at}\` |`);
  }
  return `${lines.join('\n')}\n`;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const [file, top] = process.argv.slice(2);
  if (!file) {
    process.stderr.write('usage: node bench/summarize-profile.mjs <file.cpuprofile> [top]\n');
    process.exit(2);
  }
  const profile = JSON.parse(readFileSync(file, 'utf8'));
  process.stdout.write(summarize(profile, Number(top ?? 10)));
}
