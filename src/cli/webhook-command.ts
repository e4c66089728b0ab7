/**
 * `tablegate webhook dead-letters [<name>]`: the events webhooks gave up on (docs/webhooks.md),
 * for admins, with the same connection flags and environment as `run`: one JSON object a line
 * (JSON Lines), oldest first, so they can be read, filtered with jq, or sent again by hand.
 * Returns what to print and the exit code (0 done, 1 MySQL problem); cli.ts prints and exits.
 */
import { DEFAULTS } from '../config.js';
import { reasonOf } from '../db/errors.js';
import { hostsLabel } from '../db/pool.js';
import { type Database, openDatabase } from '../execute/database.js';
import { ensureWebhookTables, WebhookStore } from '../webhooks/store.js';
import { dbConfigFrom, type RawFlags, UsageError } from './options.js';

export const WEBHOOK_SUBCOMMANDS = ['dead-letters'] as const;

/** The most a listing prints. */
const LISTED_AT_MOST = 10_000;

export async function runWebhookCommand(
  words: readonly string[],
  flags: RawFlags,
  env: NodeJS.ProcessEnv,
): Promise<{ readonly code: 0 | 1; readonly output: string }> {
  const [subcommand, ...rest] = words;
  if (subcommand !== 'dead-letters') {
    throw new UsageError(
      subcommand === undefined
        ? 'missing subcommand: webhook dead-letters'
        : `unknown subcommand 'webhook ${subcommand}'`,
    );
  }
  if (rest.length > 1)
    throw new UsageError("'webhook dead-letters [<name>]' takes one name at most");
  const db = dbConfigFrom(flags, env, 1);
  let database: Database | null = null;
  try {
    database = await openDatabase(db, {
      statementTimeoutMs: DEFAULTS.queryTimeoutMs,
      stallTimeoutMs: DEFAULTS.stallTimeoutMs,
    });
    await ensureWebhookTables(database);
    const store = new WebhookStore(database, 'cli', 0);
    const letters = await store.deadLetters(rest[0] ?? null, LISTED_AT_MOST);
    const lines = letters.map(({ event, ...letter }) =>
      JSON.stringify({ ...letter, event: JSON.parse(event) as unknown }),
    );
    return { code: 0, output: lines.join('\n') };
  } catch (error) {
    return { code: 1, output: `MySQL at ${hostsLabel(db)} as ${db.user}: ${reasonOf(error)}` };
  } finally {
    await database?.close().catch(() => {});
  }
}
