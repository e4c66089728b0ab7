/**
 * What a front door asks the gateway to do, once it has read its request (docs/mcp.md, the REST
 * pages): one of six operations, each naming its table or routine and carrying the request in
 * the stages' own terms. handle.ts decides, plans, runs and answers it; nothing in an Operation
 * is HTTP or MCP.
 *
 * A table's or routine's 404 comes before any error in the rest of the request (an unreadable
 * table must not be told apart from a missing one by a body error): so what could be refused is
 * given as `request`, a function handle.ts calls once the table or routine is known.
 */

import type { TableInfo } from '../db/schema-types.js';
import type { KeyValue, WriteTarget } from '../query/key-value.js';
import type { QueryObject } from '../query/options.js';
import type { Preferences } from '../query/prefer.js';
import type { FunctionArguments } from './rpc.js';

/** A read's query object, and the text it was parsed from. */
export interface ReadQuery {
  readonly query: QueryObject;
  /**
   * What `query` was parsed from, by which the read caches key it (pipeline/read-cache.ts): the
   * same text must always bring the same query object; null when the read is not cached.
   */
  readonly queryText: string | null;
}

/**
 * `read`: the rows `query` asks of `table`; given as it is (REST's query object, which only the
 * pipeline's own parse refuses), or as `request` when reading the front door's own form may fail.
 */
export type ReadOperation = { readonly kind: 'read'; readonly table: string } & (
  | ReadQuery
  | { readonly request: () => ReadQuery }
);

/** `read(<key>,<value>)`: the one row of `table` whose key column holds the value. */
export interface KeyReadOperation {
  readonly kind: 'key-read';
  readonly table: string;
  readonly request: () => { readonly key: KeyValue; readonly query: QueryObject };
}

export interface CreateOperation {
  readonly kind: 'create';
  readonly table: string;
  /** `table`: the table found for the role (a front door whose key syntax needs its key). */
  readonly request: (table: TableInfo) => {
    readonly body: unknown;
    readonly preferences: Preferences;
  };
}

export interface UpdateOperation {
  readonly kind: 'update';
  readonly table: string;
  readonly request: (table: TableInfo) => {
    readonly target: WriteTarget;
    readonly body: unknown;
    readonly preferences: Preferences;
  };
}

export interface DeleteOperation {
  readonly kind: 'delete';
  readonly table: string;
  readonly request: (table: TableInfo) => {
    readonly target: WriteTarget;
    readonly preferences: Preferences;
  };
}

/**
 * A routine's call: with a body (`body`), the procedure of that name, else the function; with a
 * query string (`query`), only ever the function (docs/routines.md).
 */
export interface CallOperation {
  readonly kind: 'call';
  readonly routine: string;
  readonly request: () => FunctionArguments;
}

export type WriteOperation = CreateOperation | UpdateOperation | DeleteOperation;

export type Operation =
  | ReadOperation
  | KeyReadOperation
  | CreateOperation
  | UpdateOperation
  | DeleteOperation
  | CallOperation;
