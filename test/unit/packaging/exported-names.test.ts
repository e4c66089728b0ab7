/**
 * No two modules of src/ export things of one name (CONTRIBUTING.md): an import then names one
 * thing wherever it is read, and a search for it finds it (there were two `compileRead`s, two
 * `KeyValue`s and two `TableView`s, each pair meaning different things). A re-export
 * (`export { x } from`) is the same thing, not a second one.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const SRC = path.resolve(import.meta.dirname, '../../../src');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sources(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

const DECLARED =
  /^export (?:declare )?(?:default )?(?:async )?(?:abstract )?(?:function\*?|const|let|class|interface|type|enum) ([A-Za-z_$][\w$]*)/gm;

test('every exported name of src/ is declared in one module', () => {
  const where = new Map<string, string[]>();
  for (const file of sources(SRC)) {
    const text = readFileSync(file, 'utf8');
    for (const [, name] of text.matchAll(DECLARED)) {
      const list = where.get(name as string) ?? [];
      list.push(path.relative(SRC, file));
      where.set(name as string, list);
    }
  }
  const twice = [...where]
    .filter(([, files]) => files.length > 1)
    .map(([n, f]) => `${n}: ${f.join(', ')}`);
  expect(twice).toEqual([]);
  // The pattern still finds declarations (a broken one would pass with none).
  expect(where.size).toBeGreaterThan(500);
});
