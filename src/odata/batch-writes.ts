/**
 * A write request of a `$batch` (docs/odata-batch.md) as a pipeline write Operation: `POST
 * <Set>` a create (a deep insert when its body holds related rows), `PATCH`/`PUT <Set>(<key>)`
 * an update, `DELETE <Set>(<key>)` a delete. The path and its key are read as the same URL alone
 * reads them (path.ts, key.ts): `5`, `'A-1'`, or `a=1,b='x'` by the key properties' OData names,
 * against the set's key (its primary key, else a unique key). Each is planned and guarded exactly
 * as alone (pipeline/handle.ts writeAll), and answered as OData answers it: 201 with the entity
 * and `Location`, or 204.
 */
import { batchSyntax, odataReadOnly, routeNotFound, rowNotFound } from '../errors.js';
import type { WriteResult } from '../execute/write.js';
import type { WrittenAnswer } from '../pipeline/answer.js';
import type { LaterWrite } from '../pipeline/handle.js';
import type { WriteOperation } from '../pipeline/operation.js';
import { parseEntityTags } from '../query/entity-tags.js';
import { NO_PREFERENCES, type Preferences, parsePrefer } from '../query/prefer.js';
import type { Field } from '../types/rows.js';
import { entitySerializer, fieldText } from './entity-json.js';
import { entityTarget, keyPredicate } from './key.js';
import type { ODataModel, ODataSet } from './model.js';
import { tableNamed } from './names.js';
import { type PredicatePart, parsePath } from './path.js';

/** An inner request's path, relative to the service root `/odata/`. */
export interface BatchTarget {
  /** The entity set as the URL names it, and the table it stands for. */
  readonly set: string;
  readonly table: string;
  /** The key between the parentheses after the set, as the URL alone gives it (path.ts); or null. */
  readonly key: readonly PredicatePart[] | null;
}

/** What an inner response says: status, headers, body text (JSON, or '' for none). */
export interface InnerResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/**
 * `Orders`, `Orders(5)`, `Orders(a=1,b='x')` of a write, read as the URL alone is read (path.ts,
 * route.ts): its table by the same function (names.ts tableNamed: `zip_x0020_codes` is the table
 * `zip codes`, an identifier whose escapes are not the rule's 400 `INVALID_QUERY`), and a path
 * past the entity (`Orders(1)/note`) the 404 `NOT_FOUND` a write alone gets; `url` is that path
 * as the service's URL (`/odata/…`). The service document and `$metadata`, which take GET
 * alone, are that 404 too.
 */
export function parseODataPath(
  path: string,
  model: ODataModel,
  method: string,
  url: string,
): BatchTarget {
  const parsed = parsePath(path);
  if (parsed.kind !== 'resource') throw routeNotFound(method, url);
  const table = tableNamed(model.sets.get(parsed.name), parsed.name);
  if (parsed.rest.length > 0) throw routeNotFound(method, url);
  return { set: parsed.name, key: parsed.predicate, table };
}

/** A planned write of a batch: the Operation, the check of its result, its OData answer. */
export interface BatchWrite {
  /** A LaterWrite for a request naming an earlier one (batch-references.ts). */
  readonly operation: WriteOperation | LaterWrite;
  readonly check: ((result: WriteResult) => void) | undefined;
  readonly answer: (written: WrittenAnswer) => InnerResponse;
}

/**
 * The write a method and path ask for; `model`: the path's set in the role's model (undefined
 * for a name it does not know, which the write answers as alone). `base`: the service root's
 * URL, for `Location`. A method this path does not take is a 400 (the batch answers it for that
 * request alone).
 */
export function batchWrite(
  method: string,
  path: BatchTarget,
  model: ODataSet | undefined,
  body: unknown,
  prefer: string | undefined,
  base: string,
  /** The request's If-Match (docs/odata.md, "ETags and If-Match"), checked as alone. */
  ifMatch?: string,
): BatchWrite {
  const { set, key, table: name } = path;
  switch (method) {
    case 'POST': {
      if (key !== null) {
        throw batchSyntax(`POST takes an entity set, not an entity: ${set}(${predicateText(key)})`);
      }
      const minimal = /(^|,)\s*return\s*=\s*minimal\s*(,|$)/i.test(prefer ?? '');
      const preferences: Preferences = { ...NO_PREFERENCES, representation: true };
      return {
        operation: {
          kind: 'create',
          table: name,
          request: () => {
            if (model !== undefined && model.keyKind === 'formed') throw odataReadOnly(model.name);
            return { body, preferences };
          },
        },
        check: undefined,
        answer: (written) => created(written, { set, model, base, minimal }),
      };
    }
    case 'PATCH':
    case 'PUT':
    case 'DELETE': {
      if (key === null) throw batchSyntax(`${method} takes an entity, ${set}(<key>), not a set`);
      const preferences = parsePrefer(prefer);
      // Checked on the locked row first, as alone, in the change set's one transaction: a tag
      // the row no longer has is this request's 412, and refuses its change set.
      const tags = parseEntityTags(ifMatch);
      // The key resolved as the route alone resolves it (key.ts entityTarget): by OData names,
      // against the set's key (its primary key, else a unique key).
      const operation: WriteOperation =
        method === 'DELETE'
          ? {
              kind: 'delete',
              table: name,
              request: () => ({
                target: entityTarget(model, name, key),
                preferences,
                ifMatch: tags,
              }),
            }
          : {
              kind: 'update',
              table: name,
              request: () => ({
                target: entityTarget(model, name, key),
                body,
                preferences: NO_PREFERENCES,
                ifMatch: tags,
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

const predicateText = (parts: readonly PredicatePart[]): string =>
  parts.map((p) => (p.name === null ? p.text : `${p.name}=${p.text}`)).join(',');

/**
 * A create's OData answer: 201 with the entity as the role may read it (with its context) and
 * `Location`; 204 with `Location` when `Prefer: return=minimal` asked for none, or when the role
 * may read nothing of the row.
 */
function created(
  written: WrittenAnswer,
  {
    set,
    model,
    base,
    minimal,
  }: { set: string; model: ODataSet | undefined; base: string; minimal: boolean },
): InnerResponse {
  // The entity in OData JSON (entity-json.ts: OData names, Edm values), as a create outside a
  // batch answers, not in the REST answer's form.
  const { fields } = written.planned;
  const row = written.result.rows?.[0] as unknown[] | undefined;
  if (fields === undefined || row === undefined) return { status: 204, headers: {}, body: '' };
  const text = entitySerializer(fields, false)(row);
  const location = model === undefined ? null : locationOf(model, base, fields, row);
  const headers: Record<string, string> = location === null ? {} : { location };
  if (minimal) {
    if (location !== null) headers['odata-entityid'] = location;
    return { status: 204, headers, body: '' };
  }
  headers['content-type'] = 'application/json;odata.metadata=minimal';
  const context = JSON.stringify(`${base}$metadata#${set}/$entity`);
  const rest = text.slice(1);
  return {
    status: 201,
    headers,
    body: `{"@odata.context":${context}${rest === '}' ? '' : ','}${rest}`,
  };
}

/**
 * `<base><Set>(<key>)` from the row's values of the set's key, as a create alone writes it
 * (key.ts keyPredicate); null when the row shows not all of them.
 */
function locationOf(
  set: ODataSet,
  base: string,
  fields: readonly Field[],
  row: readonly unknown[],
): string | null {
  const at = set.key.map((p) =>
    fields.findIndex((f) => f.kind === 'value' && f.column.name === p.column.name),
  );
  if (at.some((i) => i === -1)) return null;
  const values = at.map((i) => fieldText(fields, i, row, false));
  return `${base}${set.name}${keyPredicate(set, values)}`;
}
