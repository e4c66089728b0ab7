/**
 * Rows in OData JSON (docs/odata.md, "Values"): the read's own row shape (types/rows.ts Field) with
 * each key written as its OData name (names.ts) and each value as the column-type registry's
 * Edm form of tablegate's JSON (types/edm.ts): DATETIME with `T` and `Z`, Edm.Binary in
 * base64url, JSON as a string, Int64 and Decimal as strings under `IEEE754Compatible=true`.
 * Built once per row shape and format, as csvOf keeps CSV's.
 */

import type { ColumnInfo } from '../db/schema-types.js';
import { COLUMN_KINDS } from '../types/kinds.js';
import type { Field, RowForm, RowMode, RowSerializer } from '../types/rows.js';
import { fieldWidth, JSON_FORM, shapeSerializer } from '../types/rows.js';
import { encodeName } from './names.js';

const forms: Record<'plain' | 'ieee754', RowForm> = {
  plain: formOf(false),
  ieee754: formOf(true),
};

function formOf(ieee754: boolean): RowForm {
  return {
    key: encodeName,
    value: (column: ColumnInfo, mode: RowMode) => {
      const json = JSON_FORM.value(column, mode);
      const edm = COLUMN_KINDS[column.kind].edm.value(column, ieee754);
      return edm === null ? json : (value) => edm(json(value));
    },
  };
}

const kept: Record<'plain' | 'ieee754', WeakMap<readonly Field[], RowSerializer>> = {
  plain: new WeakMap(),
  ieee754: new WeakMap(),
};

/** The OData JSON serializer of rows shaped by `fields`. */
export function entitySerializer(fields: readonly Field[], ieee754: boolean): RowSerializer {
  const which = ieee754 ? 'ieee754' : 'plain';
  let made = kept[which].get(fields);
  if (made === undefined) {
    made = shapeSerializer(fields, forms[which]);
    kept[which].set(fields, made);
  }
  return made;
}

/** The slot in a row of each field (types/rows.ts Field says how many each takes). */
export function slotsOf(fields: readonly Field[]): number[] {
  const slots: number[] = [];
  let slot = 0;
  for (const field of fields) {
    slots.push(slot);
    slot += fieldWidth(field);
  }
  return slots;
}

/**
 * One field of a row alone, as OData JSON (`{"<name>":…}`): a navigation's related rows or
 * row, a property's value, out of a key read of the parent.
 */
export function fieldText(
  fields: readonly Field[],
  index: number,
  row: readonly unknown[],
  ieee754: boolean,
): string {
  const field = fields[index] as Field;
  const slot = slotsOf(fields)[index] as number;
  const serialize = entitySerializer([field], ieee754);
  const text = serialize(row.slice(slot));
  // `{"name":` … `}`
  return text.slice(JSON.stringify(encodeName(field.name)).length + 2, -1);
}

/**
 * The first `count` entities of a JSON array of entities as this module writes it (`[{…},{…}]`):
 * a page read one entity past its end (to know whether another follows) shown without it. Scans
 * the text, skipping strings, for the comma that ends the `count`-th element.
 */
export function leadingEntities(array: string, count: number): string {
  let depth = 0;
  let seen = 0;
  for (let i = 0; i < array.length; i++) {
    const c = array.charCodeAt(i);
    if (c === 0x22) {
      // A string: to its closing quote, past each escaped character.
      for (i++; array.charCodeAt(i) !== 0x22; i++) if (array.charCodeAt(i) === 0x5c) i++;
    } else if (c === 0x5b || c === 0x7b) {
      depth++;
    } else if (c === 0x5d || c === 0x7d) {
      depth--;
    } else if (c === 0x2c && depth === 1 && ++seen === count) {
      return `${array.slice(0, i)}]`;
    }
  }
  return array;
}
