/** What a read needs besides the database: pipeline/read.ts makes it, the caches keep it. */

import type { KeySlot } from '../sql/compile-read.js';
import type { CompiledQuery } from '../sql/compiled-query.js';
import type { Field, RowSerializer } from '../types/rows.js';

/** What a read needs besides the database. Shared by requests: nothing in it is ever changed. */
export interface CompiledRead {
  readonly select: CompiledQuery;
  /** The `$count` query, when the plan asks for it (the count itself is never kept). */
  readonly count: CompiledQuery | null;
  readonly serialize: RowSerializer;
  /** Fetched whole rather than streamed (plan/small-read.ts). */
  readonly small: boolean;
  /** Whether the queries hold a caller's `@user` value, put in per request (bindRead). */
  readonly namesUser: boolean;
  /** What each row object holds, key by key (types/rows.ts): the CSV header and records (csvOf). */
  readonly fields: readonly Field[];
  /** A paged read's page: what its Link to the next page is made of (http/next-link.ts). */
  readonly page: ReadPage | null;
  /** The read's cost estimate (plan/read-cost.ts), checked against the caller's budget. */
  readonly cost: number;
  /**
   * The rows its answer is estimated to hold (plan/read-cost.ts; 0: unknown): the pool serves
   * the lighter of two waiting reads first among equals (execute/acquire.ts).
   */
  readonly rows: number;
  /**
   * Every table the answer reads (cache/read-tables.ts), for the answer cache to drop it by;
   * null or absent: never kept (a view among them, or a read made elsewhere).
   */
  readonly tables?: readonly string[] | null;
  /**
   * A key read whose answer is of its one row alone (cache/read-tables.ts rowOf): the row, which
   * the answer cache drops it by; null or absent: dropped by any change to `tables`.
   */
  readonly row?: string | null;
}

/** How a read's next page is found (plan/page.ts), from its last row. */
export interface ReadPage {
  /** `$top`: a page of this many rows may have a next one; null: the read has no limit. */
  readonly top: number | null;
  /** Rows before this page when pages follow by count: `$skip`, or the token's count. */
  readonly skip: number;
  /** Where the sort keys are in a row; null when pages follow by count. */
  readonly keys: readonly KeySlot[] | null;
  /** The sort keys by table, column, type and direction, which a token is bound to. */
  readonly signature: string;
}
