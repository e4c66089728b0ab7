/**
 * The shape of a write body, before any name is resolved: a create body is one object or a
 * non-empty array of non-empty objects (at most MAX_INSERT_ROWS), an update body one non-empty
 * object. Pure: no schema, no SQL.
 */

import { invalidBody, limitExceeded } from '../errors.js';
import { MAX_INSERT_ROWS } from '../limits.js';
import { describeValue } from '../types/value-codec.js';

export type JsonObject = Readonly<Record<string, unknown>>;

export const isObject = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The rows of a create body. */
export function insertRows(body: unknown): readonly JsonObject[] {
  if (isObject(body)) {
    if (Object.keys(body).length === 0) {
      throw invalidBody('The row is empty: give at least one column and its value');
    }
    return [body];
  }
  if (!Array.isArray(body)) {
    throw invalidBody(
      `The body must be a JSON object (one row) or a non-empty array of objects, not ${describeValue(body)}`,
    );
  }
  if (body.length === 0) throw invalidBody('The array is empty: send at least one row');
  if (body.length > MAX_INSERT_ROWS) {
    throw limitExceeded(
      `At most ${MAX_INSERT_ROWS} rows can be inserted in one request; the body has ${body.length}`,
    );
  }
  body.forEach((row: unknown, index) => {
    if (!isObject(row)) {
      throw invalidBody(`Row ${index + 1} is ${describeValue(row)}, not a JSON object`);
    }
    if (Object.keys(row).length === 0) {
      throw invalidBody(`Row ${index + 1} is empty: give at least one column and its value`);
    }
  });
  return body as JsonObject[];
}

/** The columns and values of an update body, in body order. */
export function updateEntries(body: unknown): [string, unknown][] {
  if (!isObject(body)) {
    throw invalidBody(
      `The body must be a JSON object of the columns to change, not ${describeValue(body)}`,
    );
  }
  const entries = Object.entries(body);
  if (entries.length === 0) {
    throw invalidBody('The body has no columns: give at least one column and its new value');
  }
  return entries;
}
