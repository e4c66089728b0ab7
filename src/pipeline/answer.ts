/**
 * What handle.ts gives back for an Operation (operation.ts), for a front door to frame: the rows
 * of a read still to be sent (streamed or fetched whole by the front door, as its protocol
 * frames them), the one row of a key read, a write's or a call's result, or an error (what
 * handle threw, made an answer by `failed`). The success and error bodies every front door
 * answers with are made here, once.
 */

import { mapDbError } from '../db/errors.js';
import type { TableInfo } from '../db/schema-types.js';
import { ApiError } from '../errors.js';
import type { WriteResult } from '../execute/write.js';
import { SUCCESS_MESSAGES } from '../messages.js';
import type { CompiledRead } from './compiled-read.js';
import type { PlannedWrite } from './write.js';

/** A read's rows, not yet fetched: `read` runs them, its serializer writes each. */
export interface RowsAnswer {
  readonly kind: 'rows';
  readonly table: TableInfo;
  /** The read as the caches keep it (what a paged read's Link is kept by: http/next-link.ts). */
  readonly compiled: CompiledRead;
  /** The read as the caller runs it: within its budget, its `@user` values in place. */
  readonly read: CompiledRead;
  /**
   * `$count`: the number of rows the filter matches, being counted (the front door awaits it
   * before it sends anything); null when not asked for.
   */
  readonly total: Promise<number> | null;
}

/** A key read's one row (a key read without one is the 404 ROW_NOT_FOUND). */
export interface RowAnswer {
  readonly kind: 'row';
  readonly read: CompiledRead;
  readonly row: unknown[];
}

export interface WrittenAnswer {
  readonly kind: 'written';
  readonly action: 'create' | 'update' | 'delete';
  readonly planned: PlannedWrite;
  readonly result: WriteResult;
  /** `Preference-Applied`: the preferences honoured, as the request gave them; '' for none. */
  readonly applied: string;
  /**
   * A deep insert's children (pipeline/deep-insert.ts): `,"related":{…}` after the created
   * row's own answer; absent for any other write.
   */
  readonly related?: string;
}

/** A routine's answer, `{ success, results, out }` or `{ success, value }`, as JSON text. */
export interface CalledAnswer {
  readonly kind: 'called';
  readonly text: string;
}

export interface ErrorAnswer {
  readonly kind: 'error';
  readonly error: ApiError;
}

export type Answer = RowsAnswer | RowAnswer | WrittenAnswer | CalledAnswer | ErrorAnswer;

/** Anything an operation threw, as the error it answers: a MySQL error by the catalogue. */
export function failed(thrown: unknown): ErrorAnswer {
  return { kind: 'error', error: thrown instanceof ApiError ? thrown : mapDbError(thrown) };
}

/** The one error body, `{ success: false, message, code }`. */
export function errorBody(error: ApiError): { success: false; message: string; code: string } {
  return { success: false, message: error.message, code: error.code };
}

/**
 * The success bodies, `{ success, message, … }`, as JSON text with the numbers appended: the
 * bytes JSON.stringify gave for the object (same keys, same order), without a serializer per
 * request (hot path). The counts are integers and the insert id is a number, digits or null.
 */
const INSERTED = `{"success":true,"message":${JSON.stringify(SUCCESS_MESSAGES.inserted)},"insertId":`;
const UPDATED = `{"success":true,"message":${JSON.stringify(SUCCESS_MESSAGES.updated)},"affectedRows":`;
const DELETED = `{"success":true,"message":${JSON.stringify(SUCCESS_MESSAGES.deleted)},"affectedRows":`;

/** A write's answer as JSON text: the success body, with the rows read back when asked for. */
export function writtenText({ action, planned, result, related }: WrittenAnswer): string {
  switch (action) {
    case 'create': {
      const rows = rowsText(planned.representation, result.rows);
      return `${INSERTED}${JSON.stringify(result.insertId)},"affectedRows":${result.affectedRows}${rows}${related ?? ''}}`;
    }
    case 'update':
      return `${UPDATED}${result.affectedRows}${rowsText(planned.representation, result.rows)}}`;
    case 'delete':
      return `${DELETED}${result.affectedRows}}`;
  }
}

/** `,"rows":[…]`: the rows read back, serialized as a read serializes them; '' when not asked for. */
export function rowsText(
  representation: PlannedWrite['representation'],
  rows: readonly (readonly unknown[])[] | null,
): string {
  if (representation === null) return '';
  if (representation === 'none' || rows === null) return ',"rows":[]';
  let text = ',"rows":[';
  for (let i = 0; i < rows.length; i++) {
    text += (i === 0 ? '' : ',') + representation(rows[i] as readonly unknown[]);
  }
  return `${text}]`;
}
