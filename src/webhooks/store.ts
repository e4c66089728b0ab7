/**
 * What webhooks keep in the database (docs/webhooks.md), in two tables of the gateway's own,
 * created like the users table and never served (db/schema.ts OWN_TABLES):
 * - per webhook, the place in the binary log of the last event delivered (or given up on), and
 *   its lease: which gateway delivers it, until when. A gateway that restarts, crashes or takes
 *   the lease over resumes right after that place, so nothing is lost while the log holds it.
 *   The lease's times are the server's clock (NOW(3)), one clock for every gateway; it lives in
 *   the database, so it moves with the data when MySQL fails over.
 * - the dead letters: events retried for `--webhook-max-age` and given up on.
 * Every change of a position or a lease names its holder: a gateway that lost its lease (it
 * stalled past it, another took over) cannot move the position on.
 */
import type { LogPosition } from '../changes/positions.js';
import { WEBHOOK_DEAD_LETTERS_TABLE, WEBHOOKS_TABLE } from '../db/schema.js';
import type { Database } from '../execute/database.js';
import { quoteIdent } from '../sql/quote.js';

const WEBHOOKS = quoteIdent(WEBHOOKS_TABLE);
const DEAD_LETTERS = quoteIdent(WEBHOOK_DEAD_LETTERS_TABLE);

const CREATE_WEBHOOKS = `CREATE TABLE IF NOT EXISTS ${WEBHOOKS} (
  name VARCHAR(100) CHARACTER SET ascii COLLATE ascii_bin NOT NULL PRIMARY KEY,
  position VARCHAR(1024) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL,
  holder VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NULL,
  lease_until DATETIME(3) NULL,
  delivered_at DATETIME(3) NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4`;

const CREATE_DEAD_LETTERS = `CREATE TABLE IF NOT EXISTS ${DEAD_LETTERS} (
  id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
  webhook VARCHAR(100) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  message_id VARCHAR(100) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  event MEDIUMTEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  attempts INT UNSIGNED NOT NULL,
  last_error VARCHAR(500) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  first_attempt_at DATETIME(3) NOT NULL,
  dead_at DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  KEY webhook (webhook, id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4`;

/** A dead letter as listed for admins (`tablegate webhook dead-letters`). */
export interface DeadLetter {
  readonly id: number;
  readonly webhook: string;
  readonly messageId: string;
  readonly event: string;
  readonly attempts: number;
  readonly lastError: string;
  readonly firstAttemptAt: string;
  readonly deadAt: string;
}

export async function ensureWebhookTables(db: Pick<Database, 'run'>): Promise<void> {
  await db.run({ sql: CREATE_WEBHOOKS, params: [] });
  await db.run({ sql: CREATE_DEAD_LETTERS, params: [] });
}

export class WebhookStore {
  /** Per webhook, when (this process's monotonic clock) the lease last taken was asked for. */
  private readonly confirmed = new Map<string, number>();

  constructor(
    private readonly db: Pick<Database, 'run' | 'rows'>,
    /** This gateway's name in the lease column: unique per process. */
    readonly holder: string,
    private readonly leaseMs: number,
  ) {}

  /**
   * Takes or renews the lease of a webhook: true when this gateway holds it now (it held it,
   * nobody did, or its holder's lease ran out).
   */
  async lease(name: string): Promise<boolean> {
    // Before the statement: the lease runs from the server's NOW(3), which is not earlier.
    const asked = performance.now();
    await this.db.run({
      sql: `INSERT IGNORE INTO ${WEBHOOKS} (name) VALUES (?)`,
      params: [name],
    });
    const { affectedRows } = await this.db.run({
      sql: `UPDATE ${WEBHOOKS} SET holder = ?, lease_until = NOW(3) + INTERVAL ? MICROSECOND
        WHERE name = ? AND (holder = ? OR holder IS NULL OR lease_until < NOW(3))`,
      params: [this.holder, this.leaseMs * 1000, name, this.holder],
    });
    if (affectedRows === 1) this.confirmed.set(name, asked);
    else this.confirmed.delete(name);
    return affectedRows === 1;
  }

  /**
   * Whether the lease this gateway last took is sure to last `ms` more. A gateway that cannot
   * renew (MySQL not answering it) must stop delivering before its lease runs out and another
   * takes over: past that, two would deliver at once.
   */
  holdsFor(name: string, ms: number): boolean {
    const asked = this.confirmed.get(name);
    return asked !== undefined && asked + this.leaseMs - performance.now() >= ms;
  }

  /** Lets the lease go at once (a gateway stopping): another takes over without waiting. */
  async release(name: string): Promise<void> {
    this.confirmed.delete(name);
    await this.db.run({
      sql: `UPDATE ${WEBHOOKS} SET holder = NULL, lease_until = NULL WHERE name = ? AND holder = ?`,
      params: [name, this.holder],
    });
  }

  /** The place after which delivery goes on; null when the webhook has never started. */
  async position(name: string): Promise<LogPosition | null> {
    const [row] = await this.db.rows<{ position: string | null }>({
      sql: `SELECT position FROM ${WEBHOOKS} WHERE name = ?`,
      params: [name],
    });
    return row?.position == null ? null : positionFromText(row.position);
  }

  /**
   * The webhook is done with everything up to `position` (delivered, or given up on); false
   * when this gateway no longer holds its lease (nothing written).
   */
  async advance(name: string, position: LogPosition): Promise<boolean> {
    const { affectedRows } = await this.db.run({
      sql: `UPDATE ${WEBHOOKS} SET position = ?, delivered_at = NOW(3) WHERE name = ? AND holder = ?`,
      params: [positionText(position), name, this.holder],
    });
    return affectedRows === 1;
  }

  async deadLetter(letter: Omit<DeadLetter, 'id' | 'deadAt'>): Promise<void> {
    await this.db.run({
      sql: `INSERT INTO ${DEAD_LETTERS}
        (webhook, message_id, event, attempts, last_error, first_attempt_at) VALUES (?, ?, ?, ?, ?, ?)`,
      params: [
        letter.webhook,
        letter.messageId,
        letter.event,
        letter.attempts,
        letter.lastError.slice(0, 500),
        letter.firstAttemptAt,
      ],
    });
  }

  async deadLetters(webhook: string | null, limit: number): Promise<DeadLetter[]> {
    const rows = await this.db.rows<Record<string, unknown>>({
      sql: `SELECT id, webhook, message_id, event, attempts, last_error, first_attempt_at, dead_at
        FROM ${DEAD_LETTERS} ${webhook === null ? '' : 'WHERE webhook = ?'} ORDER BY id LIMIT ?`,
      params: webhook === null ? [limit] : [webhook, limit],
    });
    return rows.map((row) => ({
      id: Number(row.id),
      webhook: String(row.webhook),
      messageId: String(row.message_id),
      event: String(row.event),
      attempts: Number(row.attempts),
      lastError: String(row.last_error),
      firstAttemptAt: String(row.first_attempt_at),
      deadAt: String(row.dead_at),
    }));
  }
}

/** A position as stored: not sealed (the table is ours), so any gateway's secret reads it. */
export function positionText(position: LogPosition): string {
  const { server, file, start, end, index, gtid, before } = position;
  return JSON.stringify([server, file, start, end, index, gtid, before]);
}

export function positionFromText(text: string): LogPosition | null {
  try {
    const [server, file, start, end, index, gtid, before] = JSON.parse(text) as unknown[];
    const texts = [server, file, gtid, before];
    if (!texts.every((t) => typeof t === 'string')) return null;
    if (![start, end, index].every((n) => Number.isSafeInteger(n))) return null;
    return {
      server: server as string,
      file: file as string,
      start: start as number,
      end: end as number,
      index: index as number,
      gtid: gtid as string,
      before: before as string,
    };
  } catch {
    return null;
  }
}
