/**
 * Comments that cite a file (`pipeline/read-cache.ts`, `docs/operations.md`, mysql2's
 * `lib/base/pool.js`) send the reader there: every such path in src/ must exist, so a file that
 * moves takes its citations along (a moved file left comments citing `http/read-cache.ts`).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '../../..');

/** Where a cited path may be read from: the repository, src/, the citing file's folder, mysql2. */
function resolves(cited: string, citingFile: string): boolean {
  return [
    path.join(root, cited),
    path.join(root, 'src', cited),
    path.join(path.dirname(citingFile), cited),
    path.join(root, 'node_modules/mysql2', cited),
  ].some((candidate) => existsSync(candidate));
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return /\.(ts|mjs)$/.test(entry.name) ? [full] : [];
  });
}

const COMMENT = /\/\*[\s\S]*?\*\/|\/\/[^\n]*/g;
/** A path with at least one folder and a file extension; `./` and `../` are URLs, not files. */
const CITED = /(?<![\w./-])((?:[\w-][\w.-]*\/)+[\w.-]+\.(?:ts|mjs|js|md|json|ya?ml|sh))\b/g;

test('every file path a comment in src/ cites exists', () => {
  const stale: string[] = [];
  let cited = 0;
  for (const file of sourceFiles(path.join(root, 'src'))) {
    for (const comment of readFileSync(file, 'utf8').match(COMMENT) ?? []) {
      for (const [, citedPath] of comment.matchAll(CITED)) {
        cited++;
        if (!resolves(citedPath as string, file)) {
          stale.push(`${path.relative(root, file)}: ${citedPath}`);
        }
      }
    }
  }
  expect(stale).toEqual([]);
  // The pattern still finds citations (a broken pattern would pass with none).
  expect(cited).toBeGreaterThan(100);
});

/** A file name alone (`rows.ts`, `operations.md`): a file of the citing folder, or of the root, src/ or docs/. */
const BARE = /(?<![\w./-])([\w][\w.-]*\.(?:ts|mjs|md|json|ya?ml|sh))\b/g;

test('every file name a comment in src/ cites alone is a file of its folder (or the root, src/, docs/)', () => {
  const stale: string[] = [];
  let cited = 0;
  for (const file of sourceFiles(path.join(root, 'src'))) {
    for (const comment of readFileSync(file, 'utf8').match(COMMENT) ?? []) {
      for (const [, name] of comment.matchAll(BARE)) {
        cited++;
        const places = [path.dirname(file), root, path.join(root, 'src'), path.join(root, 'docs')];
        if (!places.some((dir) => existsSync(path.join(dir, name as string)))) {
          stale.push(`${path.relative(root, file)}: ${name}`);
        }
      }
    }
  }
  expect(stale).toEqual([]);
  expect(cited).toBeGreaterThan(100);
});
