/**
 * Sends a query's rows as a JSON array, serialized as they arrive from MySQL. A result that fits
 * in one chunk (64 KiB) goes out as one string with a Content-Length; a larger one streams, with
 * back-pressure: when the socket is full, reading from MySQL pauses. An error before the first
 * chunk is an ordinary JSON error; after it, the response can only be cut short. A client that
 * leaves mid-stream gets its statement killed on the server, and the connection goes back to the
 * pool once the server has stopped it.
 */
import { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import type { Pool, PoolConnection } from 'mysql2';
import type { Database } from '../db/database.js';
import { mapDbError } from '../db/errors.js';
import type { RowSerializer } from '../db/rows.js';
import type { CompiledQuery } from '../sql/compiled-query.js';

const CHUNK_BYTES = 64 * 1024;
const JSON_TYPE = 'application/json; charset=utf-8';

function connect(pool: Pool): Promise<PoolConnection> {
  return new Promise((resolve, reject) => {
    pool.getConnection((error, connection) =>
      error ? reject(mapDbError(error)) : resolve(connection),
    );
  });
}

export async function sendJsonRows(
  reply: FastifyReply,
  db: Database,
  query: CompiledQuery,
  serialize: RowSerializer,
): Promise<void> {
  const connection = await connect(db.pool);
  return new Promise((resolve, reject) => {
    let text = '[';
    let first = true;
    let body: Readable | null = null;
    let finished = false;
    /** Set when the client left mid-stream: the statement is being killed, rows are dropped. */
    let killing: Promise<void> | null = null;

    const release = () => {
      // mysql2 emits 'end' after 'error' too: only the first counts.
      if (finished) return false;
      finished = true;
      connection.removeListener('error', onError);
      // Never hand the connection to someone else while our KILL QUERY may still be on its way.
      if (killing) killing.finally(() => connection.release());
      else connection.release();
      return true;
    };

    const abandon = () => {
      killing = db.killQuery(connection.threadId).catch(() => {
        // The kill failed (server gone?): the connection cannot be trusted again.
        connection.destroy();
      });
      connection.resume();
    };

    function onError(error: unknown): void {
      if (!release() || killing) return;
      if (body) body.destroy(error instanceof Error ? error : new Error(String(error)));
      else reject(mapDbError(error));
    }

    // When the server dies mid-read, mysql2 reports it on the connection, not on a streaming
    // command without a callback: without this listener such a read would hang forever.
    connection.once('error', onError);
    const command = connection.execute({ sql: query.sql, rowsAsArray: true }, [
      ...query.params,
    ] as never[]);

    command.on('result', (row: unknown) => {
      if (killing) return;
      text += (first ? '' : ',') + serialize(row as unknown[]);
      first = false;
      if (text.length < CHUNK_BYTES) return;
      if (!body) {
        body = new Readable({
          read: () => connection.resume(),
          destroy: (error, callback) => {
            if (!finished) abandon();
            callback(error);
          },
        });
        reply.type(JSON_TYPE).send(body);
        resolve();
      }
      if (!body.push(text)) connection.pause();
      text = '';
    });

    command.on('end', () => {
      if (!release() || killing) return;
      text += ']';
      if (body) {
        body.push(text);
        body.push(null);
      } else {
        reply.type(JSON_TYPE).send(text);
        resolve();
      }
    });

    command.on('error', onError);
  });
}
