#!/usr/bin/env node
/**
 * The longest stretches of a V8 .cpuprofile (`node --cpu-prof`; bench/odata.mjs writes one per
 * gateway with BENCH_ODATA_PROFILE=<dir>) in which the main thread never went idle: each with
 * its length, the share of it in garbage collection, and the functions that took most of it
 * (self time), and the outermost tablegate function under which each sample ran. A stretch is
 * what a request arriving at its start waits through (a turn of the loop runs callbacks one after
 * another, and only an idle sample ends it).
 *
 *   node bench/profile-gaps.mjs <file.cpuprofile> [stretches=8] [functions=6]
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const [file, stretchCount = '8', functionCount = '6'] = process.argv.slice(2);
if (!file) {
  console.error('usage: node bench/profile-gaps.mjs <file.cpuprofile> [stretches] [functions]');
  process.exit(2);
}
const profile = JSON.parse(readFileSync(file, 'utf8'));
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const parent = new Map();
for (const node of profile.nodes)
  for (const child of node.children ?? []) parent.set(child, node.id);

function where(callFrame) {
  let url = callFrame.url ?? '';
  if (url.startsWith('file://')) url = fileURLToPath(url);
  const modules = url.lastIndexOf('/node_modules/');
  if (modules !== -1) url = url.slice(modules + '/node_modules/'.length);
  else if (url.includes('/dist/')) url = url.slice(url.lastIndexOf('/dist/') + 1);
  return url ? `${url}:${callFrame.lineNumber + 1}` : '';
}
const name = (node) =>
  `${node.callFrame.functionName || '(anonymous)'} ${where(node.callFrame)}`.trim();

/** The outermost frame of tablegate's own (dist/) above a sample, or its root's child. */
function outermost(id) {
  let found = null;
  let top = null;
  for (let at = id; at !== undefined; at = parent.get(at)) {
    const node = byId.get(at);
    if ((node.callFrame.url ?? '').includes('/dist/')) found = node;
    if (parent.get(at) !== undefined && parent.get(parent.get(at)) === undefined) top = node;
  }
  return found ?? top ?? byId.get(id);
}

/** The frame under the root a sample ran in: one callback from the loop (or a microtask run). */
function rootChild(id) {
  let at = id;
  while (parent.get(at) !== undefined && parent.get(parent.get(at)) !== undefined)
    at = parent.get(at);
  return at;
}

// BENCH_GAPS_BY=callback: a stretch ends where the callback under the root changes, not only at
// an idle sample (on a busy gateway, callbacks follow one another without idling between).
const byCallback = process.env.BENCH_GAPS_BY === 'callback';
const idle = (node) => node.callFrame.functionName === '(idle)';
let lastRoot = null;
const stretches = [];
let current = null;
let time = profile.startTime;
profile.samples.forEach((id, i) => {
  time += profile.timeDeltas[i] ?? 0;
  const node = byId.get(id);
  const root = rootChild(id);
  const newCallback = byCallback && root !== lastRoot;
  lastRoot = root;
  if (newCallback && current !== null) {
    stretches.push(current);
    current = null;
  }
  if (idle(node)) {
    if (current !== null) stretches.push(current);
    current = null;
    return;
  }
  // A sample's delta is the time since the one before: its share of the stretch.
  const ms = (profile.timeDeltas[i + 1] ?? 0) / 1000;
  current ??= { start: time, ms: 0, gc: 0, self: new Map(), outer: new Map() };
  current.ms += ms;
  if (node.callFrame.functionName === '(garbage collector)') current.gc += ms;
  current.self.set(name(node), (current.self.get(name(node)) ?? 0) + ms);
  const outer = name(outermost(id));
  current.outer.set(outer, (current.outer.get(outer) ?? 0) + ms);
});
if (current !== null) stretches.push(current);

const top = (map, n) =>
  [...map]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([what, ms]) => `${ms.toFixed(1)} ${what}`)
    .join('; ');
stretches.sort((a, b) => b.ms - a.ms);
for (const stretch of stretches.slice(0, Number(stretchCount))) {
  console.log(
    `${stretch.ms.toFixed(1)} ms at +${((stretch.start - profile.startTime) / 1000).toFixed(0)} ms (GC ${stretch.gc.toFixed(1)} ms)`,
  );
  console.log(`  self: ${top(stretch.self, Number(functionCount))}`);
  console.log(`  under: ${top(stretch.outer, Number(functionCount))}`);
}
