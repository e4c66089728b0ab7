/**
 * CONTRIBUTING.md's "A new relation kind" names the files such a kind takes: every file of src/
 * that tests a relation's kind (`relation.kind === 'one'`, a `Selection` of `kind: 'many'`) must
 * be among them, so that a new kind added there misses no branch, and each file it names exists.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { expect, test } from '@jest/globals';

const root = path.resolve(import.meta.dirname, '../../..');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sources(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

const TESTED = /\.kind\s*[!=]==?\s*'(?:one|many)'|kind: '(?:one|many)'|relation\.kind\b/;

/** The `src/…` files CONTRIBUTING.md's bullet on a new relation kind names. */
function named(): Set<string> {
  const text = readFileSync(path.join(root, 'CONTRIBUTING.md'), 'utf8');
  const start = text.indexOf('- **A new relation kind**');
  const end = text.indexOf('\n- **', start + 1);
  const bullet = text.slice(start, end);
  return new Set([...bullet.matchAll(/`(src\/[\w/.-]+\.ts)`/g)].map((m) => m[1] as string));
}

test("every file that tests a relation's kind is named where CONTRIBUTING.md says a new kind goes", () => {
  const files = named();
  expect(files.size).toBeGreaterThan(10);
  expect([...files].filter((file) => !existsSync(path.join(root, file)))).toEqual([]);
  const testing = sources(path.join(root, 'src'))
    .filter((file) => TESTED.test(readFileSync(file, 'utf8')))
    .map((file) => path.relative(root, file).split(path.sep).join('/'));
  expect(testing.length).toBeGreaterThan(10);
  expect(testing.filter((file) => !files.has(file)).sort()).toEqual([]);
});
