#!/usr/bin/env node
// The npm registry mirror our machines use does not serve every platform build of biome, swc and
// jest's resolver, so `npm install` here leaves those optional entries out of package-lock.json,
// and `npm ci` then refuses the lock as out of sync. This puts back a placeholder entry for each
// missing optional dependency (npm skips them on other platforms anyway).
// Run after every `npm install`: node scripts/complete-lock.mjs
import { readFileSync, writeFileSync } from 'node:fs';

const file = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(file, 'utf8'));
let added = 0;
for (const meta of Object.values(lock.packages)) {
  for (const [name, version] of Object.entries(meta.optionalDependencies ?? {})) {
    const key = `node_modules/${name}`;
    if (!(key in lock.packages)) {
      lock.packages[key] = { version, dev: meta.dev ?? false, optional: true };
      added++;
    }
  }
}
writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`complete-lock: added ${added} optional platform entries`);
