/**
 * The bodies every front door answers with (pipeline/answer.ts): a write's success text is the
 * bytes JSON.stringify gives for its object, whichever front door frames it; an error is
 * `{ success: false, message, code }` from the catalogue.
 */
import { describe, expect, test } from '@jest/globals';
import { mapDbError } from '../../../src/db/errors.js';
import { forbidden, invalidBody, unknownTable } from '../../../src/errors.js';
import { SUCCESS_MESSAGES } from '../../../src/messages.js';
import {
  errorBody,
  failed,
  type WrittenAnswer,
  writtenText,
} from '../../../src/pipeline/answer.js';
import type { PlannedWrite } from '../../../src/pipeline/write.js';
import { rowSerializer } from '../../../src/types/rows.js';
import { column } from '../fixtures/schema.js';

const planned = (representation: PlannedWrite['representation']): PlannedWrite =>
  ({
    job: {} as PlannedWrite['job'],
    representation,
    applied: { representation: false, resolution: false, maxAffected: false },
  }) as PlannedWrite;

function written(
  action: WrittenAnswer['action'],
  result: Partial<WrittenAnswer['result']>,
  representation: PlannedWrite['representation'] = null,
): WrittenAnswer {
  return {
    kind: 'written',
    action,
    planned: planned(representation),
    result: { affectedRows: 0, insertId: null, rows: null, ...result },
    applied: '',
  };
}

describe('writtenText: the success bodies', () => {
  test.each([
    [7, 1],
    [null, 3],
    ['18446744073709551615', 1],
  ])('create with insert id %j and %d rows is JSON.stringify of its object', (id, affected) => {
    const text = writtenText(written('create', { insertId: id, affectedRows: affected }));
    expect(text).toBe(
      JSON.stringify({
        success: true,
        message: SUCCESS_MESSAGES.inserted,
        insertId: id,
        affectedRows: affected,
      }),
    );
  });

  test.each([
    ['update', SUCCESS_MESSAGES.updated],
    ['delete', SUCCESS_MESSAGES.deleted],
  ] as const)('%s answers how many rows it changed', (action, message) => {
    expect(JSON.parse(writtenText(written(action, { affectedRows: 12 })))).toEqual({
      success: true,
      message,
      affectedRows: 12,
    });
  });

  test('the rows read back, as a read serializes them; none for a role that may read none', () => {
    const serialize = rowSerializer([
      column('id'),
      column('name', { dataType: 'varchar', columnType: 'varchar(20)', kind: 'string' }),
    ]);
    const rows = [
      [1, 'a'],
      [2, 'b'],
    ];
    expect(
      JSON.parse(writtenText(written('update', { affectedRows: 2, rows }, serialize))),
    ).toEqual({
      success: true,
      message: SUCCESS_MESSAGES.updated,
      affectedRows: 2,
      rows: [
        { id: 1, name: 'a' },
        { id: 2, name: 'b' },
      ],
    });
    const none = writtenText(written('create', { insertId: 5, affectedRows: 1, rows }, 'none'));
    expect(JSON.parse(none).rows).toEqual([]);
    // A delete reads nothing back.
    expect(writtenText(written('delete', { affectedRows: 1, rows }, serialize))).not.toContain(
      'rows',
    );
  });
});

describe('errorBody and failed: the one error body', () => {
  test('an ApiError is answered as the catalogue has it', () => {
    const error = unknownTable('nope', ['note']);
    expect(failed(error)).toEqual({ kind: 'error', error });
    expect(errorBody(error)).toEqual({
      success: false,
      message: error.message,
      code: 'UNKNOWN_TABLE',
    });
    expect(errorBody(forbidden()).code).toBe('FORBIDDEN');
    expect(errorBody(invalidBody("The argument 'rows' is required"))).toEqual({
      success: false,
      message: "The argument 'rows' is required",
      code: 'INVALID_BODY',
    });
  });

  test('a MySQL error goes by its name; anything else is the 500 that hides its message', () => {
    const duplicate = Object.assign(new Error("Duplicate entry '1' for key 'PRIMARY'"), {
      code: 'ER_DUP_ENTRY',
      errno: 1062,
      sqlState: '23000',
      sqlMessage: "Duplicate entry '1' for key 'PRIMARY'",
    });
    const mapped = failed(duplicate).error;
    expect(mapped).toEqual(mapDbError(duplicate));
    expect(mapped.status).toBeLessThan(500);
    expect(mapped.code).toBe('ER_DUP_ENTRY');
    const unknown = failed(new TypeError('x is undefined')).error;
    expect(unknown.status).toBe(500);
    expect(unknown.message).not.toContain('x is undefined');
  });
});
