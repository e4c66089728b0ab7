/**
 * `POST /table/<t>/create`, `PUT /table/<t>/update(<key>,<value>)` and
 * `DELETE /table/<t>/delete(<key>,<value>)`: path → action (query/key-value) → plan → SQL →
 * one transaction → `{ success, message, … }`. find-my-way cannot match parentheses in a pattern,
 * so the last segment is a parameter and key-value.ts reads it; an unknown action is a 404.
 */
import type {
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  HookHandlerDoneFunction,
} from 'fastify';
import type { ResultSetHeader, RowDataPacket } from 'mysql2';
import type { Database } from '../db/database.js';
import { mapDataWarnings } from '../db/errors.js';
import { routeNotFound, unsupportedMediaType } from '../errors.js';
import { planDelete, planInsert, planUpdate } from '../plan/write-plan.js';
import { parseWriteAction, type WriteAction } from '../query/key-value.js';
import type { Services } from '../services.js';
import { compileDelete, compileInsertBatches, compileUpdate } from '../sql/compile-write.js';
import type { CompiledQuery } from '../sql/compiled-query.js';

interface WriteRoute {
  Params: { table: string; action: string };
  Body: unknown;
}

export function writeRoutes(app: FastifyInstance, { db, schema }: Services): void {
  app.post<WriteRoute>('/table/:table/:action', async (request) => {
    actionOf(request, 'create');
    const table = await schema.require(request.params.table);
    requireJson(request);
    const { plan } = await schema.plan(table, (t) => planInsert(t, request.body));
    const result = await runWrite(db, compileInsertBatches(plan), plan.rows.length > 1);
    return {
      success: true,
      message: 'Data inserted successfully',
      insertId: result.insertId,
      affectedRows: result.affectedRows,
    };
  });

  app.put<WriteRoute>('/table/:table/:action', async (request) => {
    const { match } = actionOf(request, 'update');
    const table = await schema.require(request.params.table);
    requireJson(request);
    const { plan } = await schema.plan(table, (t) => planUpdate(t, match, request.body));
    const result = await runWrite(db, [compileUpdate(plan)], false);
    return {
      success: true,
      message: 'Data updated successfully',
      affectedRows: result.affectedRows,
    };
  });

  app.delete<WriteRoute>(
    '/table/:table/:action',
    { onRequest: ignoreEmptyBody },
    async (request) => {
      const { match } = actionOf(request, 'delete');
      const table = await schema.require(request.params.table);
      const { plan } = await schema.plan(table, (t) => planDelete(t, match));
      const result = await runWrite(db, [compileDelete(plan)], false);
      return {
        success: true,
        message: 'Data deleted successfully',
        affectedRows: result.affectedRows,
      };
    },
  );
}

/** The action the last segment names, if it is this method's; any other is a 404. */
function actionOf<K extends WriteAction['kind']>(
  request: FastifyRequest<WriteRoute>,
  kind: K,
): Extract<WriteAction, { kind: K }> {
  const action = parseWriteAction(request.params.action);
  if (action?.kind !== kind) throw routeNotFound(request.method, request.url);
  return action as Extract<WriteAction, { kind: K }>;
}

/**
 * Fastify parses a body as its Content-Type says, so `text/plain` arrives here as a string and a
 * missing type with no body as undefined: both are refused like any other type.
 */
function requireJson(request: FastifyRequest): void {
  const type = request.headers['content-type'];
  const essence = type?.split(';')[0]?.trim().toLowerCase();
  if (essence !== 'application/json') throw unsupportedMediaType();
}

/**
 * DELETE ignores its body; many clients still send `Content-Type: application/json` with an
 * empty one, which Fastify's JSON parser would refuse (FST_ERR_CTP_EMPTY_JSON_BODY). With no body
 * the type means nothing, so it is dropped before parsing. Runs after the auth guard (route hooks
 * follow the root's).
 */
function ignoreEmptyBody(
  request: FastifyRequest,
  _reply: FastifyReply,
  done: HookHandlerDoneFunction,
): void {
  const headers = request.raw.headers;
  const length = headers['content-length'];
  const empty =
    headers['transfer-encoding'] === undefined && (length === undefined || length === '0');
  if (empty) delete headers['content-type'];
  done();
}

interface WarningRow extends RowDataPacket {
  Level: string;
  Code: number;
  Message: string;
}

interface WriteResult {
  readonly affectedRows: number;
  /** The first auto-increment id of the first statement; null when there is none. */
  readonly insertId: number | string | null;
}

/**
 * Runs the statements in one transaction on one connection: all of them or none. A statement
 * that left a warning meaning a value was changed on its way in (strict mode lets DECIMAL
 * rounding pass as a Note) rolls everything back and answers like the error would.
 * `unprepare`: drop the prepared statement after use (multi-row INSERT texts rarely repeat, and
 * each cached one holds a server-side statement).
 */
async function runWrite(
  db: Database,
  statements: readonly CompiledQuery[],
  unprepare: boolean,
): Promise<WriteResult> {
  const connection = await db.promise.getConnection();
  let committed = false;
  try {
    // BEGIN and the first statement go out together (mysql2 queues both on the connection):
    // one round trip fewer than awaiting BEGIN first.
    const begun = connection.beginTransaction();
    let affectedRows = 0;
    let insertId: number | string | null = null;
    for (const [index, statement] of statements.entries()) {
      const executing = connection.execute<ResultSetHeader>(statement.sql, [
        ...statement.params,
      ] as never[]);
      const [result] = index === 0 ? (await Promise.all([begun, executing]))[1] : await executing;
      if (unprepare) connection.unprepare(statement.sql);
      if (result.warningStatus > 0) {
        const [warnings] = await connection.query<WarningRow[]>('SHOW WARNINGS');
        const error = mapDataWarnings(warnings);
        if (error) throw error;
      }
      affectedRows += result.affectedRows;
      if (index === 0) insertId = publicInsertId(result.insertId);
    }
    await connection.commit();
    committed = true;
    return { affectedRows, insertId };
  } finally {
    // A broken connection cannot roll back; the server rolls back when it goes away.
    if (!committed) await connection.rollback().catch(() => {});
    connection.release();
  }
}

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/**
 * The OK packet's last insert id as JSON: null for 0 (no auto-increment column), a number while
 * exact, else a string. mysql2 reads it as signed, so ids of BIGINT UNSIGNED past 2^63 arrive
 * negative; insert ids never are.
 */
function publicInsertId(value: number | string): number | string | null {
  const id = BigInt.asUintN(64, BigInt(value));
  if (id === 0n) return null;
  return id <= MAX_SAFE ? Number(id) : id.toString();
}
