/**
 * An OData request body → the body of tablegate's create, update or call (docs/odata.md,
 * "Writes"): each property by the name it stands for (names.ts), Edm forms back to tablegate's
 * (a JSON property's string is its JSON text, Edm.Binary base64url is base64); instance
 * annotations of the entity or a property (`@odata.type`, `price@odata.type`, …) are dropped,
 * a `Nav@odata.bind` refused; a deep insert's related rows are read so too, as entities of the
 * navigation's target. A name that is no property is passed on as the name it stands for
 * (or as it is), for the write stage to refuse by name; one with escapes no name has, or a
 * second name for one column, is refused here.
 */
import type { ColumnInfo } from '../db/schema-types.js';
import { invalidBody, odataUnsupported } from '../errors.js';
import { excerpt } from '../query/lexer.js';
import { COLUMN_KINDS } from '../types/kinds.js';
import type { ODataSet } from './model.js';
import { canonicalName, decodeName } from './names.js';

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The body of a create (`POST`), a merge (`PATCH`) or a replace (`PUT`) of an entity of `set`,
 * as tablegate's write takes it: one function for a request alone and inside `$batch` alike.
 */
export function writeBody(
  set: ODataSet | undefined,
  method: 'POST' | 'PATCH' | 'PUT',
  body: unknown,
): unknown {
  const out = entityBody(set, body);
  if (method === 'PUT' && set !== undefined && isObject(out)) replaced(set, out);
  return out;
}

/** PUT replaces: each nullable column the role may update that the body leaves out is set to NULL. */
function replaced(set: ODataSet, body: Record<string, unknown>): void {
  const keys = new Set(set.key.map((p) => p.column.name));
  for (const column of set.view.update ?? []) {
    if (column.generated || keys.has(column.name) || !column.nullable) continue;
    if (!(column.name in body)) body[column.name] = null;
  }
}

/** The entity's properties by their columns' names, their values as tablegate takes them. */
function entityBody(set: ODataSet | undefined, body: unknown): unknown {
  if (!isObject(body)) return body;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(body)) {
    const at = key.indexOf('@');
    if (at !== -1) {
      // `<navigation>@odata.bind` links rows, which a body here cannot: refused, never dropped.
      if (at > 0 && key.slice(at + 1) === 'odata.bind') {
        throw odataUnsupported(
          `The annotation '${excerpt(key)}' is not served: write the foreign key's properties instead (docs/odata.md)`,
        );
      }
      // Any other, of the entity or of a property (`price@odata.type`), is an instance annotation.
      continue;
    }
    const property = set?.property.get(key);
    const navigation = set?.navigationByName.get(key);
    const name =
      property?.column.name ?? navigation?.relation.name ?? canonicalName(key, invalidBody);
    // `_x0032_fa` and `2fa` (the column's own name) are one column: never one silently dropped.
    if (Object.hasOwn(out, name)) {
      throw invalidBody(`The body names '${excerpt(name)}' twice (as '${excerpt(key)}' too)`);
    }
    out[name] =
      property !== undefined
        ? storedValue(property.column, name, value)
        : navigation !== undefined
          ? relatedBody(navigation.targetSet, value)
          : value;
  }
  return out;
}

/** A deep insert's related rows (or row), each read as an entity of the target set. */
function relatedBody(target: ODataSet, value: unknown): unknown {
  return Array.isArray(value)
    ? value.map((row) => entityBody(target, row))
    : entityBody(target, value);
}

/** A property's value as tablegate's write takes it: its kind's Edm form read back (types/edm.ts). */
function storedValue(column: ColumnInfo, name: string, value: unknown): unknown {
  const read = COLUMN_KINDS[column.kind].edm.body;
  return typeof value !== 'string' || read === null ? value : read(value, name);
}

/** A routine's parameters by their names (an action's body). */
export function parametersBody(body: unknown): unknown {
  if (!isObject(body)) return body;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(body)) {
    if (key.startsWith('@')) continue;
    out[decodeName(key) ?? key] = value;
  }
  return out;
}
