/**
 * Sends a query's rows as a JSON array, serialized as they arrive from MySQL. A result that fits
 * in one chunk (64 KiB) goes out as one string with a Content-Length; a larger one streams, with
 * back-pressure: when the socket is full, reading from MySQL pauses. An error before the first
 * chunk is an ordinary JSON error; after it, the response can only be cut short.
 */
import { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import type { Pool, PoolConnection } from 'mysql2';
import { mapDbError } from '../db/errors.js';
import type { RowSerializer } from '../db/rows.js';
import type { CompiledQuery } from '../sql/compiled-query.js';

const CHUNK_BYTES = 64 * 1024;

function connect(pool: Pool): Promise<PoolConnection> {
  return new Promise((resolve, reject) => {
    pool.getConnection((error, connection) =>
      error ? reject(mapDbError(error)) : resolve(connection),
    );
  });
}

export async function sendJsonRows(
  reply: FastifyReply,
  pool: Pool,
  query: CompiledQuery,
  serialize: RowSerializer,
): Promise<void> {
  const connection = await connect(pool);
  return new Promise((resolve, reject) => {
    let text = '[';
    let first = true;
    let body: Readable | null = null;
    let finished = false;

    const command = connection.execute({ sql: query.sql, rowsAsArray: true }, [
      ...query.params,
    ] as never[]);

    command.on('result', (row: unknown) => {
      text += (first ? '' : ',') + serialize(row as unknown[]);
      first = false;
      if (text.length < CHUNK_BYTES) return;
      if (!body) {
        body = new Readable({
          read: () => connection.resume(),
          destroy: (error, callback) => {
            // The client went away mid-stream: the connection is mid-result, so it cannot go back to the pool.
            if (!finished) connection.destroy();
            callback(error);
          },
        });
        reply.type('application/json; charset=utf-8').send(body);
        resolve();
      }
      if (!body.push(text)) connection.pause();
      text = '';
    });

    command.on('end', () => {
      finished = true;
      connection.release();
      text += ']';
      if (body) {
        body.push(text);
        body.push(null);
      } else {
        reply.type('application/json; charset=utf-8').send(text);
        resolve();
      }
    });

    command.on('error', (error: unknown) => {
      finished = true;
      connection.release();
      if (body) body.destroy(error instanceof Error ? error : new Error(String(error)));
      else reject(mapDbError(error));
    });
  });
}
