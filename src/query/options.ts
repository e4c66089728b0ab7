/**
 * The read query string (as Fastify decoded it) → ReadRequest: `$select`, `$filter`, `$orderby`,
 * `$top`, `$skip`, `$count` (CONTRACT §3.1). Checks shape only; names are resolved by the plan
 * stage. A key that names an option without its `$` (`filter`, `TOP`) or has no name at all (a
 * shell ate `$filter` inside double quotes) is refused, since ignoring it would answer every row;
 * any other key without `$` (`_=<cache buster>`, `utm_source`) is not ours and is ignored.
 */
import { invalidQuery, optionWithoutDollar } from '../errors.js';
import type { OrderItem, ReadRequest } from './ast.js';
import { parseFilter } from './filter-parser.js';
import { asciiKeyword, excerpt } from './lexer.js';

export const READ_OPTIONS = ['$select', '$filter', '$orderby', '$top', '$skip', '$count'] as const;
export type ReadOption = (typeof READ_OPTIONS)[number];

const KNOWN: ReadonlySet<string> = new Set(READ_OPTIONS);

/** `filter` → `$filter`, matched in any case (`orderBy`, `TOP`). */
const WITHOUT_DOLLAR: ReadonlyMap<string, ReadOption> = new Map(
  READ_OPTIONS.map((option) => [option.slice(1), option]),
);

/** The option a key without `$` was meant to be, or null for a key that is not ours. */
export function misspeltOption(key: string): ReadOption | '' | null {
  if (key === '') return '';
  return WITHOUT_DOLLAR.get(key.toLowerCase()) ?? null;
}

// The same whitespace the filter lexer skips.
const SPACES = /[ \t\r\n]+/;
const trim = (text: string): string => text.replace(/^[ \t\r\n]+|[ \t\r\n]+$/g, '');

export type QueryObject = Readonly<Record<string, string | readonly string[] | undefined>>;

export function parseReadOptions(query: QueryObject): ReadRequest {
  const options = new Map<ReadOption, string>();
  for (const [key, raw] of Object.entries(query)) {
    if (!key.startsWith('$')) {
      const meant = misspeltOption(key);
      if (meant !== null) throw optionWithoutDollar(excerpt(key), meant);
      continue;
    }
    if (!KNOWN.has(key)) {
      throw invalidQuery(
        `Unknown query option '${excerpt(key)}'; the options are ${READ_OPTIONS.join(', ')}`,
      );
    }
    if (raw === undefined) continue;
    // A repeated key arrives as an array (`?$top=1&$top=2`).
    if (typeof raw !== 'string' && raw.length > 1) {
      throw invalidQuery(`Query option '${key}' is given more than once`);
    }
    const value = typeof raw === 'string' ? raw : raw[0];
    if (value !== undefined) options.set(key as ReadOption, value);
  }

  const filter = options.get('$filter');
  if (filter === '') throw invalidQuery('$filter is empty; leave it out to read every row');
  const top = options.get('$top');
  const skip = options.get('$skip');
  const count = options.get('$count');
  const orderby = options.get('$orderby');

  return {
    select: parseSelect(options.get('$select')),
    filter: filter === undefined ? null : parseFilter(filter),
    orderBy: orderby === undefined ? [] : parseOrderBy(orderby),
    top: top === undefined ? null : parseCount('$top', top),
    skip: skip === undefined ? null : parseCount('$skip', skip),
    count: count === undefined ? false : parseBoolean('$count', count),
  };
}

function parseSelect(text: string | undefined): ReadRequest['select'] {
  if (text === undefined) return '*';
  if (trim(text) === '') {
    throw invalidQuery('$select is empty; use * or a comma-separated list of column names');
  }
  if (trim(text) === '*') return '*';
  const names: string[] = [];
  const seen = new Set<string>();
  text.split(',').forEach((item, index) => {
    const name = trim(item);
    if (name === '') throw invalidQuery(`$select item ${index + 1} is empty`);
    if (seen.has(name)) {
      throw invalidQuery(`$select names column '${excerpt(name)}' more than once`);
    }
    seen.add(name);
    names.push(name);
  });
  return names;
}

function parseOrderBy(text: string): OrderItem[] {
  return text.split(',').map((item, index) => {
    const words = trim(item).split(SPACES);
    const [column, direction, extra] = words;
    if (column === undefined || column === '') {
      throw invalidQuery(`$orderby item ${index + 1} is empty`);
    }
    const keyword = direction === undefined ? 'asc' : asciiKeyword(direction);
    if (extra !== undefined || (keyword !== 'asc' && keyword !== 'desc')) {
      throw invalidQuery(
        `$orderby item ${index + 1} ('${excerpt(trim(item))}') must be a column name, optionally followed by asc or desc`,
      );
    }
    return { column, direction: keyword };
  });
}

function parseCount(option: '$top' | '$skip', text: string): number {
  if (!/^[0-9]+$/.test(text)) {
    throw invalidQuery(`${option} must be a non-negative integer, got '${excerpt(text)}'`);
  }
  const value = Number(text);
  if (!Number.isSafeInteger(value)) {
    throw invalidQuery(
      `${option} must be at most ${Number.MAX_SAFE_INTEGER}, got ${excerpt(text)}`,
    );
  }
  return value;
}

function parseBoolean(option: '$count', text: string): boolean {
  const keyword = asciiKeyword(text);
  if (keyword === 'true') return true;
  if (keyword === 'false') return false;
  throw invalidQuery(`${option} must be true or false, got '${excerpt(text)}'`);
}
