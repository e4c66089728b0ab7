/**
 * An event the binary-log library cannot decode (docs/changes.md, "An event the reader cannot
 * decode"): @vlasky/zongji skips a MySQL compressed transaction (TRANSACTION_PAYLOAD_EVENT) or a
 * partial JSON update (PARTIAL_UPDATE_ROWS_EVENT), raises an error the first time on a
 * connection, and goes on with the next event. The reader takes that error at the seam where
 * it enters (a real ZongJi instance raising it with its own code, for the library's own event
 * classes), not as a broken connection: it goes on past the transaction and hands it on as
 * undecodable, of its table or of tables unknown. MariaDB writes neither event, so the events
 * around the error are given as the library emits them.
 */
import { beforeEach, describe, expect, test } from '@jest/globals';
import ZongJi from '@vlasky/zongji';
import {
  BinlogReader,
  isUndecodableError,
  type Transaction,
  type ZongJiInstance,
} from '../../../src/changes/reader.js';

/** The library's event classes (its package exports only the ZongJi class). */
const LIBRARY_EVENTS = '../../../node_modules/@vlasky/zongji/lib/binlog_event.js';
const { TransactionPayload, PartialUpdateRows } = (await import(LIBRARY_EVENTS)) as Record<
  'TransactionPayload' | 'PartialUpdateRows',
  { unsupportedReason: string }
>;

interface Library extends ZongJiInstance {
  emit(event: 'binlog' | 'ready' | 'error', value?: unknown): boolean;
  /** What the library calls on reading such an event's header, before the event itself. */
  _warnUnsupportedEvent(EventClass: unknown): void;
}

let reader: BinlogReader;
let library: Library;
let transactions: Transaction[];
let errors: Error[];
let position = 4;

/** An event as the library emits it: its name, where it ends, and what else it carries. */
function emit(name: string, fields: Record<string, unknown> = {}): void {
  position += 100;
  library.emit('binlog', {
    getEventName: () => name,
    nextPosition: position,
    timestamp: 1_764_720_000_000,
    ...fields,
  });
}

const gtid = (n: number) => emit('gtid', { gtid: `3e11fa47-71ca-11e1-9e33-c80aa9429562:${n}` });
const tableMap = (schemaName: string, tableName: string) =>
  emit('tablemap', { tableId: 7, schemaName, tableName });
const insert = (tableName: string, id: number) =>
  emit('writerows', {
    tableId: 7,
    tableMap: { 7: { parentSchema: 'shop', tableName } },
    rows: [{ id }],
  });

beforeEach(async () => {
  transactions = [];
  errors = [];
  position = 4;
  reader = new BinlogReader(
    {
      connection: {},
      database: 'shop',
      serverId: 1,
      server: 'mysql:3306',
      from: { file: 'binlog.000001', position: 4, gtids: '' },
    },
    (transaction) => transactions.push(transaction),
    (error) => errors.push(error),
  );
  // Made as start() makes it, never started: nothing connects.
  library = new (ZongJi as unknown as new (options: object) => Library)({});
  const { ready } = reader.receive(library);
  // Streaming from the first event, as the server sends one at once (the log's name).
  emit('rotate', { binlogName: 'binlog.000001', position: 4 });
  await ready;
});

describe('the library raises its error for an event it skips', () => {
  test('a compressed transaction: passed over whole, undecodable of tables unknown; the next is read', () => {
    gtid(1);
    library._warnUnsupportedEvent(TransactionPayload);
    emit('transactionpayload', { gtid: '3e11fa47-71ca-11e1-9e33-c80aa9429562:1' });
    const after = position;
    gtid(2);
    tableMap('shop', 'items');
    insert('items', 5);
    emit('xid');

    expect(errors).toEqual([]);
    expect(transactions.map((t) => [t.start, t.end, t.changes])).toEqual([
      [
        4,
        after,
        [
          {
            op: 'undecodable',
            table: null,
            reason: 'a compressed transaction (binlog_transaction_compression=ON)',
          },
        ],
      ],
      [after, position, [{ op: 'insert', table: 'items', before: null, after: { id: 5 } }]],
    ]);
    expect(reader.position).toEqual({ file: 'binlog.000001', position, gtids: '' });
  });

  test('a partial JSON update: its transaction undecodable, of the tables it names; also when the library stays silent the second time', () => {
    for (const n of [1, 2]) {
      gtid(n);
      tableMap('shop', 'docs');
      insert('docs', n);
      tableMap('shop', 'items');
      // The library raises it once a connection.
      if (n === 1) library._warnUnsupportedEvent(PartialUpdateRows);
      emit('partialupdaterows');
      emit('xid');
    }

    expect(errors).toEqual([]);
    const lost = (table: string) => ({
      op: 'undecodable',
      table,
      reason: 'a partial JSON update (binlog_row_value_options=PARTIAL_JSON)',
    });
    expect(transactions.map((t) => t.changes)).toEqual([
      [lost('docs'), lost('items')],
      [lost('docs'), lost('items')],
    ]);
  });

  test("a partial JSON update of another database's table: nothing of the gateway's", () => {
    gtid(1);
    // Another database's table map is filtered out by the library: none arrives.
    library._warnUnsupportedEvent(PartialUpdateRows);
    emit('partialupdaterows');
    emit('xid');
    gtid(2);
    tableMap('shop', 'items');
    insert('items', 1);
    emit('xid');

    expect(errors).toEqual([]);
    expect(transactions.map((t) => t.changes.map((c) => c.op))).toEqual([['insert']]);
  });
});

// Not an undecodable event, but read at the same seam: what MySQL writes with gtid_mode OFF.
test('MySQL without GTIDs: a transaction begun by an anonymous GTID event is read, with no GTID', () => {
  emit('anonymousgtid', { gtid: '00000000-0000-0000-0000-000000000000:0' });
  emit('query', { query: 'BEGIN', schema: 'shop' });
  tableMap('shop', 'items');
  insert('items', 6);
  emit('xid');
  expect(errors).toEqual([]);
  expect(transactions.map((t) => [t.start, t.end, t.gtid, t.changes])).toEqual([
    [4, position, '', [{ op: 'insert', table: 'items', before: null, after: { id: 6 } }]],
  ]);
  expect(reader.position).toEqual({ file: 'binlog.000001', position, gtids: '' });
});

test('any other error of the library is a broken connection', () => {
  const error = new Error('read ECONNRESET');
  library.emit('error', error);
  expect(errors).toEqual([error]);
});

test("the library's messages are the ones recognised", () => {
  expect(isUndecodableError(new Error(TransactionPayload.unsupportedReason))).toBe(true);
  expect(isUndecodableError(new Error(PartialUpdateRows.unsupportedReason))).toBe(true);
  expect(isUndecodableError(new Error('Connection lost: The server closed the connection.'))).toBe(
    false,
  );
});
