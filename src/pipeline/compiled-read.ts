/** What a read needs besides the database: pipeline/read.ts makes it, the caches keep it. */
import type { Field, RowSerializer } from '../db/rows.js';
import type { CompiledQuery } from '../sql/compiled-query.js';

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
  /** What each row object holds, key by key (db/rows.ts): the CSV header and records (csvOf). */
  readonly fields: readonly Field[];
}
