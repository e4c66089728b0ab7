/**
 * The read query string (as Fastify decoded it) → ReadRequest: `$select`, `$filter`, `$orderby`,
 * `$top`, `$skip`, `$count`, `$expand`, `$apply` (`$apply`: apply-parser.ts), `$skiptoken` (docs/reading.md;
 * a `$skiptoken` is only noted here: the read pipeline opens it, pipeline/skiptoken.ts). Checks shape only; names are resolved
 * by the plan stage. A key that names an option without its `$` (`filter`, `TOP`) or has no name
 * at all (a shell ate `$filter` inside double quotes) is refused, since ignoring it would answer
 * every row; any other key without `$` (`_=<cache buster>`, `utm_source`) is not ours and is
 * ignored.
 */
import { invalidQuery, limitExceeded, optionWithoutDollar } from '../errors.js';
import { MAX_EXPAND_DEPTH, MAX_EXPANDED_RELATIONS } from '../limits.js';
import { parseApply } from './apply-parser.js';
import type { ExpandItem, ExpandOptions, FilterExpr, OrderItem, ReadRequest } from './ast.js';
import { parseFilter, placed } from './filter-parser.js';
import { asciiKeyword, excerpt, isWhitespace, scanQuoted } from './lexer.js';

export const READ_OPTIONS = [
  '$select',
  '$filter',
  '$orderby',
  '$top',
  '$skip',
  '$count',
  '$expand',
  '$apply',
  '$skiptoken',
] as const;
export type ReadOption = (typeof READ_OPTIONS)[number];

const KNOWN: ReadonlySet<string> = new Set(READ_OPTIONS);

/** The options an `$expand` item takes in its parentheses. */
const EXPAND_OPTIONS = ['$select', '$filter', '$orderby', '$top', '$skip', '$expand'] as const;
type ExpandOption = (typeof EXPAND_OPTIONS)[number];
const KNOWN_IN_EXPAND: ReadonlySet<string> = new Set(EXPAND_OPTIONS);

/** `filter` → `$filter`, matched in any case (`orderBy`, `TOP`). */
const WITHOUT_DOLLAR: ReadonlyMap<string, ReadOption> = new Map(
  READ_OPTIONS.map((option) => [option.slice(1), option]),
);

/** The option a key without `$` was meant to be, or null for a key that is not ours. */
export function misspeltOption(key: string): ReadOption | '' | null {
  if (key === '') return '';
  return WITHOUT_DOLLAR.get(key.toLowerCase()) ?? null;
}

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
  const top = options.get('$top');
  const skip = options.get('$skip');
  const count = options.get('$count');
  const orderby = options.get('$orderby');
  const expand = options.get('$expand');
  const continues = options.has('$skiptoken');
  if (continues && skip !== undefined) {
    throw invalidQuery(
      '$skiptoken continues after the last row of the page before: it takes the place of $skip, so leave $skip out',
    );
  }
  const apply = options.get('$apply');

  const request: ReadRequest = {
    select: parseSelect(options.get('$select')),
    filter: parseFilterOption(filter, '$filter'),
    orderBy: orderby === undefined ? [] : parseOrderBy(orderby),
    top: top === undefined ? null : parseCount('$top', top),
    skip: skip === undefined ? null : parseCount('$skip', skip),
    count: count === undefined ? false : parseBoolean('$count', count),
    continues,
  };
  if (apply !== undefined) return { ...request, apply: parseApplyOption(apply, options) };
  if (expand === undefined) return request;
  const items = parseExpand(expand, 0);
  let relations = 0;
  const countRelations = (list: readonly ExpandItem[]): void => {
    for (const item of list) {
      relations += item.path.length;
      if (item.options.expand !== undefined) countRelations(item.options.expand);
    }
  };
  countRelations(items);
  if (relations > MAX_EXPANDED_RELATIONS) {
    throw limitExceeded(
      `$expand follows ${relations} relations; the limit is ${MAX_EXPANDED_RELATIONS} per request`,
    );
  }
  return { ...request, expand: items };
}

/**
 * `$apply`: its answer's keys are the groupby values and aliases, so `$select` and `$expand`,
 * which choose keys, cannot come with it.
 */
function parseApplyOption(text: string, options: ReadonlyMap<ReadOption, string>) {
  for (const option of ['$select', '$expand'] as const) {
    if (options.has(option)) {
      throw invalidQuery(
        `${option} cannot be combined with $apply: the answer's keys are its groupby values and aliases`,
      );
    }
  }
  if (options.has('$skiptoken')) {
    throw invalidQuery(
      '$skiptoken cannot be combined with $apply: page the groups with $orderby, $top and $skip',
    );
  }
  if (trim(text) === '') {
    throw invalidQuery('$apply is empty; e.g. $apply=groupby((category),aggregate($count as n))');
  }
  return parseApply(text);
}

function parseFilterOption(text: string | undefined, where: string): FilterExpr | null {
  if (text === undefined) return null;
  if (text === '') throw invalidQuery(`${where} is empty; leave it out to read every row`);
  return parseFilter(text);
}

/**
 * `text` split at `separator` where it stands outside single-quoted strings, double-quoted
 * names and parentheses (a quote left open runs to the end; the parser of the piece says so).
 */
export function splitOutside(text: string, separator: ',' | ';'): string[] {
  const items: string[] = [];
  let depth = 0;
  let start = 0;
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === "'" || c === '"') {
      i = scanQuoted(text, i)?.end ?? text.length;
      continue;
    }
    if (c === '(') depth++;
    else if (c === ')') depth = Math.max(0, depth - 1);
    else if (c === separator && depth === 0) {
      items.push(text.slice(start, i));
      start = i + 1;
    }
    i++;
  }
  items.push(text.slice(start));
  return items;
}

/**
 * A column name as a `$select` or `$orderby` item writes it: in double quotes (`"zip code"`, a
 * doubled quote inside), or as the text itself. Null for a quoted name with text after it.
 */
function nameIn(text: string): string | null {
  if (!text.startsWith('"')) return text;
  const scanned = scanQuoted(text, 0);
  return scanned !== null && scanned.end === text.length ? scanned.value : null;
}

function parseSelect(text: string | undefined, where = '$select'): ReadRequest['select'] {
  if (text === undefined) return '*';
  if (trim(text) === '') {
    throw invalidQuery(`${where} is empty; use * or a comma-separated list of column names`);
  }
  if (trim(text) === '*') return '*';
  const names: string[] = [];
  const seen = new Set<string>();
  splitOutside(text, ',').forEach((item, index) => {
    const written = trim(item);
    if (written === '') throw invalidQuery(`${where} item ${index + 1} is empty`);
    const name = nameIn(written);
    if (name === null) {
      throw invalidQuery(
        `${where} item ${index + 1} ('${excerpt(written)}') must be a column name; write a name with spaces or quotes in double quotes ("zip code", "say ""hi""")`,
      );
    }
    if (seen.has(name)) {
      throw invalidQuery(`${where} names column '${excerpt(name)}' more than once`);
    }
    seen.add(name);
    names.push(name);
  });
  return names;
}

/**
 * `name ( "/" name )*` at the start of `text`, each name in double quotes or a run of characters
 * other than whitespace, `/`, `(`, `)` and quotes; and the text after it. Null when it starts with
 * none or a quoted name is unterminated.
 */
function leadingPath(text: string): { names: string[]; rest: string } | null {
  const names: string[] = [];
  let i = 0;
  for (;;) {
    if (text[i] === '"') {
      const scanned = scanQuoted(text, i);
      if (scanned === null) return null;
      names.push(scanned.value);
      i = scanned.end;
    } else {
      const start = i;
      while (i < text.length && !isWhitespace(text[i]) && !'/()"\''.includes(text[i] as string)) {
        i++;
      }
      if (i === start) return null;
      names.push(text.slice(start, i));
    }
    if (text[i] !== '/') return { names, rest: text.slice(i) };
    i++;
  }
}

function parseOrderBy(text: string, where = '$orderby'): OrderItem[] {
  return splitOutside(text, ',').map((item, index) => {
    const written = trim(item);
    if (written === '') throw invalidQuery(`${where} item ${index + 1} is empty`);
    const path = leadingPath(written);
    const direction = path === null ? null : trim(path.rest);
    const keyword = direction === '' ? 'asc' : direction === null ? null : asciiKeyword(direction);
    if (path === null || (keyword !== 'asc' && keyword !== 'desc')) {
      throw invalidQuery(
        `${where} item ${index + 1} ('${excerpt(written)}') must be a column name, optionally followed by asc or desc`,
      );
    }
    const column = path.names.pop() as string;
    const order: OrderItem = { column, direction: keyword };
    return path.names.length === 0 ? order : { ...order, path: path.names };
  });
}

/**
 * `$expand=customer,items($select=qty;$top=3;$expand=product)`: items split at top-level commas,
 * each a path of relations (`items/product`) with options in parentheses for the last one.
 * `depth` counts the levels above (nested `$expand` options).
 */
function parseExpand(text: string, depth: number): ExpandItem[] {
  if (trim(text) === '') {
    throw invalidQuery('$expand is empty; name the relations to expand, e.g. $expand=customer');
  }
  return splitOutside(text, ',').map((item, index) => {
    const written = trim(item);
    const path = leadingPath(written);
    if (path === null) {
      throw invalidQuery(
        `$expand item ${index + 1} ('${excerpt(written)}') must be a relation name, a path like items/product, optionally with options in parentheses`,
      );
    }
    const level = depth + path.names.length;
    if (level > MAX_EXPAND_DEPTH) {
      throw limitExceeded(
        `$expand '${excerpt(written)}' goes ${level} levels deep; the limit is ${MAX_EXPAND_DEPTH}`,
      );
    }
    const rest = trim(path.rest);
    if (rest === '') return { path: path.names, options: NO_OPTIONS };
    if (!rest.startsWith('(') || !rest.endsWith(')')) {
      throw invalidQuery(
        `$expand item ${index + 1} ('${excerpt(written)}'): options go in parentheses after the relation, e.g. items($top=3;$orderby=id)`,
      );
    }
    return { path: path.names, options: parseExpandOptions(rest.slice(1, -1), path.names, level) };
  });
}

const NO_OPTIONS: ExpandOptions = {
  select: '*',
  filter: null,
  orderBy: [],
  top: null,
  skip: null,
};

/** `$select=…;$filter=…;…` of the relation at the end of `path`. */
function parseExpandOptions(text: string, path: readonly string[], depth: number): ExpandOptions {
  const named = `$expand '${path.join('/')}'`;
  const given = new Map<ExpandOption, string>();
  for (const part of splitOutside(text, ';')) {
    const written = trim(part);
    if (written === '') continue;
    const equals = written.indexOf('=');
    const key = trim(equals === -1 ? written : written.slice(0, equals));
    if (!KNOWN_IN_EXPAND.has(key)) {
      throw invalidQuery(
        `Unknown option '${excerpt(key)}' in ${named}; the options are ${EXPAND_OPTIONS.join(', ')}`,
      );
    }
    if (equals === -1) throw invalidQuery(`Option '${key}' in ${named} has no '=' and value`);
    if (given.has(key as ExpandOption)) {
      throw invalidQuery(`Option '${key}' is given more than once in ${named}`);
    }
    given.set(key as ExpandOption, written.slice(equals + 1));
  }
  const where = (option: string) => `${option} of ${named}`;
  const top = given.get('$top');
  const skip = given.get('$skip');
  const orderby = given.get('$orderby');
  const expand = given.get('$expand');
  const filter = given.get('$filter');
  const options: ExpandOptions = {
    select: parseSelect(given.get('$select'), where('$select')),
    filter: placed(where('$filter'), () => parseFilterOption(filter, where('$filter'))),
    orderBy: orderby === undefined ? [] : parseOrderBy(orderby, where('$orderby')),
    top: top === undefined ? null : parseCount('$top', trim(top), where('$top')),
    skip: skip === undefined ? null : parseCount('$skip', trim(skip), where('$skip')),
  };
  return expand === undefined ? options : { ...options, expand: parseExpand(expand, depth) };
}

function parseCount(option: '$top' | '$skip', text: string, where: string = option): number {
  if (!/^[0-9]+$/.test(text)) {
    throw invalidQuery(`${where} must be a non-negative integer, got '${excerpt(text)}'`);
  }
  const value = Number(text);
  if (!Number.isSafeInteger(value)) {
    throw invalidQuery(`${where} must be at most ${Number.MAX_SAFE_INTEGER}, got ${excerpt(text)}`);
  }
  return value;
}

function parseBoolean(option: '$count', text: string): boolean {
  const keyword = asciiKeyword(text);
  if (keyword === 'true') return true;
  if (keyword === 'false') return false;
  throw invalidQuery(`${option} must be true or false, got '${excerpt(text)}'`);
}
