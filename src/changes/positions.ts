/**
 * Event ids of the change feed (docs/changes.md): where in the binary log an event is — the
 * server and its log file, where its transaction starts and ends, the event's place among the
 * transaction's row changes, its GTID and the GTID state before it (so another server of a
 * Galera cluster, whose log has other files and offsets, finds it too) — as an opaque text signed with HMAC-SHA-256, so a client can hand it
 * back (`Last-Event-ID`, `$since`) but not make one up. The key is derived from the secret the
 * `$skiptoken`s use (`--skiptoken-secret`, else the JWT secret), so ids work on every gateway of
 * one deployment and across restarts.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { badFeedPosition } from '../errors.js';

/** A place in the binary log: a transaction, and an event of it. */
export interface LogPosition {
  /** The server whose log `file`, `start` and `end` are places of (its `-h` host). */
  readonly server: string;
  /** The binary log file the transaction is in. */
  readonly file: string;
  /** Where its first event starts (its GTID event): a reader started here reads it again. */
  readonly start: number;
  /** Where the next transaction starts. */
  readonly end: number;
  /** The event's index among the transaction's changes; -1: the transaction as a whole. */
  readonly index: number;
  /** Its GTID (`domain-server-sequence` on MariaDB), or '' when the server gives none. */
  readonly gtid: string;
  /** The GTID state just before the transaction (MariaDB), or '' when unknown. */
  readonly before: string;
}

const VERSION = 'f1';
const MAC_BYTES = 16;

/** The sequence number of a log file name (`binlog.000042` → 42). */
export function fileNumber(file: string): number {
  const match = /\.(\d+)$/.exec(file);
  return match === null ? 0 : Number(match[1]);
}

/** Negative when `a` comes before `b` in the log, 0 at the same event. */
export function comparePositions(
  a: Pick<LogPosition, 'file' | 'end' | 'index'>,
  b: Pick<LogPosition, 'file' | 'end' | 'index'>,
): number {
  return fileNumber(a.file) - fileNumber(b.file) || a.end - b.end || a.index - b.index;
}

export class FeedPositions {
  private readonly key: Buffer;

  constructor(secret: string) {
    this.key = createHmac('sha256', secret).update('tablegate change feed position').digest();
  }

  private mac(text: string): Buffer {
    return createHmac('sha256', this.key).update(text).digest().subarray(0, MAC_BYTES);
  }

  seal(position: LogPosition): string {
    const text = Buffer.from(
      JSON.stringify([
        position.server,
        position.file,
        position.start,
        position.end,
        position.index,
        position.gtid,
        position.before,
      ]),
    ).toString('base64url');
    return `${VERSION}.${text}.${this.mac(text).toString('base64url')}`;
  }

  /** The position an id holds, when this feed made it; else 400 BAD_FEED_POSITION. */
  open(id: string): LogPosition {
    const [version, text, mac, ...rest] = id.split('.');
    if (version !== VERSION || text === undefined || mac === undefined || rest.length > 0) {
      throw badFeedPosition();
    }
    const given = Buffer.from(mac, 'base64url');
    const expected = this.mac(text);
    // Only the MAC's one spelling: base64 decoding skips stray characters and a last letter's
    // unused bits, which would let many texts stand for one id.
    if (
      given.length !== expected.length ||
      !timingSafeEqual(given, expected) ||
      given.toString('base64url') !== mac
    ) {
      throw badFeedPosition();
    }
    const parsed: unknown = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
    if (!Array.isArray(parsed) || parsed.length !== 7) throw badFeedPosition();
    const [server, file, start, end, index, gtid, before] = parsed as unknown[];
    if (
      typeof server !== 'string' ||
      typeof before !== 'string' ||
      typeof file !== 'string' ||
      !Number.isSafeInteger(start) ||
      !Number.isSafeInteger(end) ||
      !Number.isSafeInteger(index) ||
      typeof gtid !== 'string'
    ) {
      throw badFeedPosition();
    }
    return {
      server,
      file,
      start: start as number,
      end: end as number,
      index: index as number,
      gtid,
      before,
    };
  }
}
