/**
 * The module graph of src/: no import cycle (type imports included: a cycle of types is still a
 * knot a reader has to untie), and the pure stages stay pure — query/ knows no schema or SQL,
 * plan/ no SQL, sql/ no HTTP, and nothing but execute/ and db/ (the pool, the schema reader)
 * imports the MySQL driver to run statements. And no two folders import each other (a root file
 * such as services.ts or errors.ts is a node of its own): a layer above and a layer below, as
 * CONTRIBUTING.md draws them (each imports only those on lines below its own).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from '@jest/globals';

const SRC = path.resolve('src');

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return sources(full);
    return name.endsWith('.ts') ? [full] : [];
  });
}

/** Every relative import and export-from of a file, as the source file it names. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const found: string[] = [];
  for (const match of text.matchAll(/(?:import|export)\s[^;]*?from\s+'(\.{1,2}\/[^']+)'/g)) {
    const target = path.resolve(path.dirname(file), (match[1] as string).replace(/\.js$/, '.ts'));
    found.push(target);
  }
  for (const match of text.matchAll(/import\('(\.{1,2}\/[^']+)'\)/g)) {
    found.push(path.resolve(path.dirname(file), (match[1] as string).replace(/\.js$/, '.ts')));
  }
  return found;
}

const files = sources(SRC);
const graph = new Map(files.map((file) => [file, importsOf(file)]));
const relative = (file: string) => path.relative(SRC, file);

/** One cycle of the graph, as the files around it, or null. */
function findCycle(): string[] | null {
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (file: string): string[] | null => {
    state.set(file, 'open');
    stack.push(file);
    for (const next of graph.get(file) ?? []) {
      if (state.get(next) === 'open') return [...stack.slice(stack.indexOf(next)), next];
      if (state.get(next) === undefined && graph.has(next)) {
        const cycle = visit(next);
        if (cycle !== null) return cycle;
      }
    }
    stack.pop();
    state.set(file, 'done');
    return null;
  };
  for (const file of files) {
    if (state.get(file) !== undefined) continue;
    const cycle = visit(file);
    if (cycle !== null) return cycle;
  }
  return null;
}

/** The node of the folder graph a file belongs to: its top folder under src/, or itself. */
function nodeOf(file: string): string {
  const [first, ...rest] = relative(file).split(path.sep);
  return rest.length > 0 ? `${first}/` : (first as string);
}

/** Each pair of nodes that import each other, with one import each way. */
function twoWayPairs(): string[] {
  const edges = new Map<string, string>();
  for (const [file, targets] of graph) {
    for (const target of targets) {
      const key = `${nodeOf(file)} → ${nodeOf(target)}`;
      if (nodeOf(file) !== nodeOf(target) && !edges.has(key)) {
        edges.set(key, `${relative(file)} → ${relative(target)}`);
      }
    }
  }
  const pairs: string[] = [];
  for (const [key, example] of edges) {
    const [from, to] = key.split(' → ') as [string, string];
    const back = edges.get(`${to} → ${from}`);
    if (back !== undefined && from < to) pairs.push(`${from} ↔ ${to} (${example}; ${back})`);
  }
  return pairs;
}

/** CONTRIBUTING.md's picture of the layers: each node and the line it is on, top first. */
function pictured(): Map<string, number> {
  const text = readFileSync(path.resolve('CONTRIBUTING.md'), 'utf8');
  const after = text.slice(text.indexOf('this is who imports whom:'));
  const block = /```text\n([\s\S]*?)```/.exec(after)?.[1] ?? '';
  const lines = new Map<string, number>();
  block
    .split('\n')
    .filter((line) => line.trim() !== '')
    .forEach((line, at) => {
      for (const name of (line.trim().split(/\s{3,}/)[0] as string).split(/\s+/)) {
        lines.set(name, at);
      }
    });
  return lines;
}

describe('the module graph of src/', () => {
  test('every relative import names a file that exists', () => {
    const missing = [...graph].flatMap(([file, targets]) =>
      targets.filter((target) => !graph.has(target)).map((t) => `${relative(file)} → ${t}`),
    );
    expect(missing).toEqual([]);
  });

  test('no two folders import each other', () => {
    expect(twoWayPairs()).toEqual([]);
    // The graph has folder edges to judge (an empty graph would pass).
    expect(new Set([...graph].flatMap(([, t]) => t.map(nodeOf))).size).toBeGreaterThan(10);
  });

  test("each folder imports only those below it in CONTRIBUTING.md's picture, which names them all", () => {
    const lines = pictured();
    const nodes = new Set([...graph].flatMap(([file, targets]) => [file, ...targets].map(nodeOf)));
    expect([...nodes].filter((node) => !lines.has(node)).sort()).toEqual([]);
    expect([...lines.keys()].filter((name) => !nodes.has(name)).sort()).toEqual([]);
    const upward: string[] = [];
    for (const [file, targets] of graph) {
      for (const target of targets) {
        const [from, to] = [nodeOf(file), nodeOf(target)];
        if (from !== to && (lines.get(from) ?? -1) >= (lines.get(to) ?? -1)) {
          upward.push(`${relative(file)} → ${relative(target)}`);
        }
      }
    }
    expect(upward).toEqual([]);
    expect(lines.size).toBeGreaterThan(20);
  });

  test('no import cycle', () => {
    expect(findCycle()?.map(relative) ?? null).toBeNull();
  });

  test.each([
    ['query', ['plan', 'sql', 'db', 'execute', 'http', 'pipeline', 'policy']],
    ['plan', ['sql', 'execute', 'http', 'pipeline']],
    ['sql', ['execute', 'http', 'pipeline']],
    ['types', ['plan', 'sql', 'execute', 'http', 'pipeline', 'policy', 'openapi']],
  ])('%s/ imports none of %j', (folder, forbidden) => {
    const crossing = files
      .filter((file) => relative(file).startsWith(`${folder}/`))
      .flatMap((file) =>
        (graph.get(file) ?? [])
          .filter((target) => forbidden.some((f) => relative(target).startsWith(`${f}/`)))
          .map((target) => `${relative(file)} → ${relative(target)}`),
      );
    expect(crossing).toEqual([]);
  });
});
