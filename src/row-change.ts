/**
 * A change as the change feed's reader (changes/reader.ts) reads it from the binary log, and as
 * everything told of one takes it: the feed, its routes and webhooks, and the answer cache. At
 * the root, so that cache/, which is below changes/, takes the same type and copies none.
 */

/** A row image: column name to value, as the binary-log library decodes it. */
export type Row = Record<string, unknown>;

export type Change =
  | {
      readonly op: 'insert' | 'update' | 'delete';
      readonly table: string;
      readonly before: Row | null;
      readonly after: Row | null;
    }
  | { readonly op: 'truncate' | 'schema'; readonly table: string }
  /**
   * Row changes the library cannot decode (docs/changes.md, "An event the reader cannot
   * decode"): of this table, or of tables unknown (null: a compressed transaction hides them).
   */
  | { readonly op: 'undecodable'; readonly table: string | null; readonly reason: string };
