/**
 * A column's kind is looked up in the column-type registry (src/types/kinds.ts), never tested
 * elsewhere, nor its data type (a CHAR's or BINARY's rule is its kind's): a new column type is
 * one entry there (CONTRIBUTING.md). What maps data types to kinds (db/schema.ts,
 * db/result-columns.ts) names kinds without testing one.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from '@jest/globals';
import type { JsonKind } from '../../../src/db/schema-types.js';
import { COLUMN_KINDS } from '../../../src/types/kinds.js';

const SRC = path.resolve('src');

/** The change feed's own exclusions of spatial columns: the binary log reader's, not a codec's. */
const ALLOWED = new Set(['changes/decide.ts', 'changes/subscription.ts']);

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return sources(full);
    return name.endsWith('.ts') ? [full] : [];
  });
}

const KINDS = Object.keys(COLUMN_KINDS) as JsonKind[];
const NAMES = KINDS.join('|');
/** `column.kind === 'json'`, `info.kind !== 'geometry'`, `x.column.kind === …`. */
const COMPARED = new RegExp(`\\b(?:column|info)\\.kind\\s*[!=]==?\\s*'(?:${NAMES})'`);
/** `column.dataType === 'char'`: a data type's rule outside the registry and db/. */
const TYPE_COMPARED = /\b(?:column|info)\.dataType\s*[!=]==?\s*'/;
/** `switch (column.kind)`. */
const SWITCHED = /switch\s*\((?:[\w.]*\.)?(?:column|info)\.kind\)\s*{\s*case\s*'(\w+)'/g;

describe('the column kind', () => {
  test('every kind has an entry in the registry, and nothing else is one', () => {
    expect(KINDS.sort()).toEqual(
      [
        'binary',
        'bit',
        'date',
        'datetime',
        'decimal',
        'float',
        'geometry',
        'integer',
        'json',
        'string',
        'year',
      ].sort(),
    );
  });

  test('is tested nowhere outside the registry', () => {
    const found: string[] = [];
    for (const file of sources(SRC)) {
      const name = path.relative(SRC, file).split(path.sep).join('/');
      if (name.startsWith('types/') || ALLOWED.has(name)) continue;
      const text = readFileSync(file, 'utf8');
      text.split('\n').forEach((line, at) => {
        const typed = TYPE_COMPARED.test(line) && !name.startsWith('db/');
        if (COMPARED.test(line) || typed) found.push(`${name}:${at + 1}: ${line.trim()}`);
      });
      for (const match of text.matchAll(SWITCHED)) {
        if (KINDS.includes(match[1] as JsonKind)) found.push(`${name}: ${match[0]}`);
      }
    }
    expect(found).toEqual([]);
  });
});
