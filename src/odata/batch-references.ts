/**
 * Content-ID references in a `$batch` change set (docs/odata-batch.md, "References"): a request
 * whose URL starts with `$<id>` names the entity an earlier `POST` of the same change set
 * created — `PATCH $1`, `PUT $1` and `DELETE $1` that entity, `POST $1/<navigation>` a new row
 * of a to-many navigation, its foreign key set to that entity's key. The key is known only once
 * the earlier create ran, so the write is a LaterWrite (pipeline/handle.ts), made inside the
 * transaction from that create's result: each key column as its body gave it, else the id MySQL
 * made for its AUTO_INCREMENT column (as a deep insert finds its parent's key).
 */
import type { ColumnInfo } from '../db/schema-types.js';
import { batchSyntax, deepInsertKeyMismatch } from '../errors.js';
import type { WriteResult } from '../execute/write.js';
import type { LaterWrite } from '../pipeline/handle.js';
import type { InnerRequest } from './batch-parse.js';
import { type BatchWrite, batchWrite } from './batch-writes.js';
import { writeBody } from './body.js';
import type { ODataModel, ODataProperty, ODataSet } from './model.js';
import type { PredicatePart } from './path.js';

/** The entity a create of the change set makes: its set, and its body by column names. */
export interface Created {
  readonly set: ODataSet;
  readonly body: Record<string, unknown>;
}

/** An earlier request of the same change set: its id, its place, what it creates (or null). */
export interface Earlier {
  readonly id: string;
  readonly created: Created | null;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A write whose URL starts with `$<id>`: `$<id>` alone or `$<id>/<navigation>`. */
export function referencedWrite(
  inner: InnerRequest,
  path: string,
  body: unknown,
  base: string,
  model: ODataModel,
  earlier: readonly Earlier[],
  /** The JSON form, whose reference must also be in `dependsOn` (OData JSON 4.01 §19.1). */
  json: boolean,
): BatchWrite & { readonly created: Created | null } {
  const match = /^\$([^/]+)(?:\/([^/]+))?$/u.exec(path);
  if (match === null) throw batchSyntax(`'${inner.url}' is not '$<id>' or '$<id>/<navigation>'`);
  const id = match[1] as string;
  const at = earlier.findIndex((e) => e.id === id);
  if (at === -1) {
    throw batchSyntax(
      `'$${id}' names no earlier request of this change set: a reference names a POST before it in the same change set`,
    );
  }
  const referenced = (earlier[at] as Earlier).created;
  if (referenced === null) {
    throw batchSyntax(
      `'$${id}' names a request that creates no entity: only a POST's can be named`,
    );
  }
  if (json && !inner.dependsOn.includes(id)) {
    throw batchSyntax(`A request that names '$${id}' must list '${id}' in its "dependsOn"`);
  }
  const { method } = inner;
  const prefer = inner.headers.prefer;
  let made: BatchWrite | null = null;
  let created: Created | null = null;
  let operation: LaterWrite['operation'];
  if (match[2] === undefined) {
    if (method !== 'PATCH' && method !== 'PUT' && method !== 'DELETE') {
      throw batchSyntax(`'$${id}' is an entity: it takes PATCH, PUT and DELETE, not ${method}`);
    }
    const { set } = referenced;
    const given = method === 'DELETE' ? undefined : writeBody(set, method, body);
    operation = (results) => {
      const key = keyText(referenced, id, results[at]);
      const path = { set: set.name, table: set.table.name, key };
      made = batchWrite(method, path, set, given, prefer, base, inner.headers['if-match']);
      return made.operation as ReturnType<LaterWrite['operation']>;
    };
  } else {
    const navigation = referenced.set.navigationByName.get(match[2]);
    const target = navigation === undefined ? undefined : model.sets.get(navigation.target);
    if (navigation === undefined || target === undefined || navigation.relation.kind !== 'many') {
      throw batchSyntax(`'${match[2]}' is no to-many navigation property of '$${id}'`);
    }
    if (method !== 'POST') throw batchSyntax(`'${path}' is an entity set: it takes POST`);
    const own = writeBody(target, 'POST', body);
    if (!isObject(own)) throw batchSyntax(`The body of a POST to '${path}' must be an object`);
    created = { set: target, body: own };
    operation = (results) => {
      for (const { local, remote } of navigation.relation.on) {
        const value = keyValue(referenced, local, id, results[at]);
        if (remote.name in own && own[remote.name] !== value) {
          throw deepInsertKeyMismatch(navigation.relation.name, remote.name);
        }
        own[remote.name] = value;
      }
      const path = { set: target.name, table: target.table.name, key: null };
      made = batchWrite('POST', path, target, own, prefer, base);
      return made.operation as ReturnType<LaterWrite['operation']>;
    };
  }
  return {
    operation: { kind: 'later', operation },
    check: (result) => (made as BatchWrite | null)?.check?.(result),
    answer: (written) => (made as unknown as BatchWrite).answer(written),
    created,
  };
}

/** The created entity's value of `column`: as its body gave it, else MySQL's AUTO_INCREMENT id. */
function keyValue(
  created: Created,
  column: ColumnInfo,
  id: string,
  result: WriteResult | undefined,
): unknown {
  const given = created.body[column.name];
  if (given !== undefined && given !== null) return given;
  if (column.autoIncrement && result?.insertId !== null && result?.insertId !== undefined) {
    return result.insertId;
  }
  throw batchSyntax(
    `The '${column.name}' of the entity '$${id}' created is not known (not in its body, not an AUTO_INCREMENT id): name it by its key`,
  );
}

/**
 * The created entity's key as the URL `Set(<key>)` gives it (path.ts): `5`, `'A-1'`, or
 * `a=1,b='x'` by the key properties' OData names.
 */
function keyText(created: Created, id: string, result: WriteResult | undefined): PredicatePart[] {
  const literal = (value: unknown) =>
    typeof value === 'string' ? `'${value.replaceAll("'", "''")}'` : String(value);
  const { key } = created.set;
  const text = (p: ODataProperty) => literal(keyValue(created, p.column, id, result));
  if (key.length === 1) return [{ name: null, text: text(key[0] as ODataProperty) }];
  return key.map((p) => ({ name: p.name, text: text(p) }));
}
