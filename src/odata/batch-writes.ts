/**
 * A write request of a `$batch` (docs/odata-batch.md) as a pipeline write Operation: `POST
 * <Set>` a create (a deep insert when its body holds related rows), `PATCH`/`PUT <Set>(<key>)`
 * an update, `DELETE <Set>(<key>)` a delete; `<key>` is `5`, `'A-1'`, or `a=1,b='x'` for a
 * composite key, in the filter language's literal syntax. Each is planned and guarded exactly as
 * alone (pipeline/handle.ts writeAll), and answered as OData answers it: 201 with the entity
 * and `Location`, or 204. The entity set's name is the table's (the OData adapter's name mapping
 * takes its place when it lands).
 */
import type { TableInfo } from '../db/schema-types.js';
import { batchSyntax, invalidQuery, rowNotFound } from '../errors.js';
import type { WriteResult } from '../execute/write.js';
import type { WrittenAnswer } from '../pipeline/answer.js';
import type { LaterWrite } from '../pipeline/handle.js';
import type { WriteOperation } from '../pipeline/operation.js';
import { parseWriteAction } from '../query/key-value.js';
import { NO_PREFERENCES, type Preferences, parsePrefer } from '../query/prefer.js';
import { parseWriteTarget } from '../query/write-query.js';
import { entitySerializer } from './entity-json.js';
import { keyFilter } from './key.js';
import { decodeName, encodeName } from './names.js';

/** An inner request's path, relative to the service root `/odata/`. */
export interface BatchTarget {
  /** The entity set as the URL names it, and the table it stands for. */
  readonly set: string;
  readonly table: string;
  /** The text between the parentheses after the set, or null. */
  readonly key: string | null;
}

/** What an inner response says: status, headers, body text (JSON, or '' for none). */
export interface InnerResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/** `Orders`, `Orders(5)`, `Orders(a=1,b='x')`; null for anything else (another route's path). */
export function parseODataPath(path: string): BatchTarget | null {
  const match = /^([^/()]+)(?:\((.*)\))?$/su.exec(path);
  if (match === null) return null;
  let set: string;
  try {
    set = decodeURIComponent(match[1] as string);
  } catch {
    return null;
  }
  // The OData identifier's name (odata/names.ts): `zip_x0020_codes` is the table `zip codes`.
  const table = decodeName(set);
  return table === null ? null : { set, key: match[2] ?? null, table };
}

/** A planned write of a batch: the Operation, the check of its result, its OData answer. */
export interface BatchWrite {
  /** A LaterWrite for a request naming an earlier one (batch-references.ts). */
  readonly operation: WriteOperation | LaterWrite;
  readonly check: ((result: WriteResult) => void) | undefined;
  readonly answer: (written: WrittenAnswer) => InnerResponse;
}

/**
 * The write a method and path ask for. `base`: the service root's URL, for `Location`. A
 * method this path does not take is a 400 (the batch answers it for that request alone).
 */
export function batchWrite(
  method: string,
  path: BatchTarget,
  body: unknown,
  prefer: string | undefined,
  base: string,
): BatchWrite {
  const { set, key, table: name } = path;
  switch (method) {
    case 'POST': {
      if (key !== null)
        throw batchSyntax(`POST takes an entity set, not an entity: ${set}(${key})`);
      const minimal = /(^|,)\s*return\s*=\s*minimal\s*(,|$)/i.test(prefer ?? '');
      const preferences: Preferences = { ...NO_PREFERENCES, representation: true };
      // The table's key, for Location: known once the table is found for the role.
      let primary: readonly string[] = [];
      return {
        operation: {
          kind: 'create',
          table: name,
          request: (table) => {
            primary = table.primaryKey;
            return { body, preferences };
          },
        },
        check: undefined,
        answer: (written) => created(written, { set, base, minimal, primary }),
      };
    }
    case 'PATCH':
    case 'PUT':
    case 'DELETE': {
      if (key === null) throw batchSyntax(`${method} takes an entity, ${set}(<key>), not a set`);
      const preferences = parsePrefer(prefer);
      const operation: WriteOperation =
        method === 'DELETE'
          ? {
              kind: 'delete',
              table: name,
              request: (table) => ({ target: keyTarget(table, key, 'delete'), preferences }),
            }
          : {
              kind: 'update',
              table: name,
              request: (table) => ({
                target: keyTarget(table, key, 'update'),
                body,
                preferences: NO_PREFERENCES,
              }),
            };
      return {
        operation,
        // No row at the key is the request's 404, and refuses its change set.
        check: (result) => {
          if (result.affectedRows === 0) throw rowNotFound(set);
        },
        answer: () => ({ status: 204, headers: {}, body: '' }),
      };
    }
    default:
      throw batchSyntax(`A change set takes POST, PATCH, PUT and DELETE, not ${method}`);
  }
}

/**
 * The key in the parentheses as the rows it names: one value for a one-column primary key
 * (`update(<pk>,<value>)`), else `name=value` pairs, every primary key column once.
 */
function keyTarget(table: TableInfo, key: string, kind: 'update' | 'delete') {
  const pairs = splitKey(key);
  const primary = table.primaryKey;
  if (pairs.length === 1 && !/^\s*[A-Za-z_][A-Za-z0-9_]*\s*=/.test(pairs[0] as string)) {
    if (primary.length !== 1) {
      throw invalidQuery(
        `'${table.name}' has a key of ${primary.length} columns: name each, (a=1,b=2)`,
      );
    }
    const action = parseWriteAction(`${kind}(${primary[0]},${(pairs[0] as string).trim()})`);
    if (action === null || action.kind === 'create' || action.match === null) {
      throw invalidQuery(`Not a key: (${key})`);
    }
    return parseWriteTarget(kind, action.match, {});
  }
  const named = new Map<string, string>();
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    if (at === -1) throw invalidQuery(`Not a key: (${key})`);
    named.set(pair.slice(0, at).trim(), pair.slice(at + 1).trim());
  }
  if (named.size !== primary.length || primary.some((column) => !named.has(column))) {
    throw invalidQuery(
      `The key of '${table.name}' is (${primary.join(',')}): name each column once`,
    );
  }
  const filter = keyFilter(primary.map((column) => [column, named.get(column) as string]));
  return parseWriteTarget(kind, null, { $filter: filter });
}

/** The key's comma-separated parts, commas inside quoted strings kept. */
function splitKey(key: string): string[] {
  const parts: string[] = [];
  let current = '';
  let quoted = false;
  for (const char of key) {
    if (char === "'") quoted = !quoted;
    if (char === ',' && !quoted) {
      parts.push(current);
      current = '';
    } else {
      current += char;
    }
  }
  parts.push(current);
  return parts;
}

/**
 * A create's OData answer: 201 with the entity as the role may read it (with its context) and
 * `Location`; 204 with `Location` when `Prefer: return=minimal` asked for none, or when the role
 * may read nothing of the row.
 */
function created(
  written: WrittenAnswer,
  {
    set,
    base,
    minimal,
    primary,
  }: { set: string; base: string; minimal: boolean; primary: readonly string[] },
): InnerResponse {
  // The entity in OData JSON (entity-json.ts: OData names, Edm values), as a create outside a
  // batch answers, not in the REST answer's form.
  const { fields } = written.planned;
  const row = written.result.rows?.[0];
  const text =
    fields !== undefined && row !== undefined
      ? entitySerializer(fields, false)(row as unknown[])
      : null;
  const entity = text === null ? null : (JSON.parse(text) as Record<string, unknown>);
  const location = entity === null ? null : locationOf(primary, set, base, entity);
  const headers: Record<string, string> = location === null ? {} : { location };
  if (minimal || entity === null) {
    if (location !== null) headers['odata-entityid'] = location;
    return { status: 204, headers, body: '' };
  }
  headers['content-type'] = 'application/json;odata.metadata=minimal';
  const context = JSON.stringify(`${base}$metadata#${set}/$entity`);
  const rest = (text as string).slice(1);
  return {
    status: 201,
    headers,
    body: `{"@odata.context":${context}${rest === '}' ? '' : ','}${rest}`,
  };
}

/** `<base><Set>(<key>)` from the entity's primary key values; null when it shows not all of them. */
function locationOf(
  primary: readonly string[],
  set: string,
  base: string,
  entity: Record<string, unknown>,
): string | null {
  const names = primary.map(encodeName);
  if (names.length === 0 || names.some((name) => !(name in entity))) return null;
  const literal = (value: unknown) =>
    typeof value === 'string' ? `'${value.replaceAll("'", "''")}'` : String(value);
  const key =
    names.length === 1
      ? literal(entity[names[0] as string])
      : names.map((name) => `${name}=${literal(entity[name])}`).join(',');
  return `${base}${set}(${encodeURIComponent(key).replaceAll('%3D', '=').replaceAll('%2C', ',').replaceAll('%27', "'")})`;
}
