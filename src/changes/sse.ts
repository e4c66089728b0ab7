/**
 * One subscriber's event stream (docs/changes.md): the server-sent events the hub hands it, a
 * job's transactions in one write to the socket. The socket's own buffer is the subscriber's buffer: past
 * `--feed-max-lag` events (or FEED_MAX_LAG_BYTES) not yet taken by the client, the stream ends
 * with `event: overflow`, and the hub never waits for it. A comment every FEED_HEARTBEAT_MS
 * keeps proxies from closing an idle stream; a token that expires, or whose user is removed, ends
 * it (`event: expired`).
 */
import type { ServerResponse } from 'node:http';
import type { TableInfo } from '../db/schema-types.js';
import { FEED_EXPIRY_CHECK_MS, FEED_HEARTBEAT_MS, FEED_MAX_LAG_BYTES } from '../limits.js';
import type { ReadGroup } from './decide.js';
import type { Delivery, Subscriber } from './hub.js';

export interface EventStreamOptions {
  readonly table: string;
  readonly maxLag: number;
  /** What the subscriber may see of the table, compiled for it (null: it may see nothing now). */
  readonly compile: (table: TableInfo) => { read: ReadGroup; key: ReadGroup };
  readonly groups: { read: ReadGroup; key: ReadGroup };
  /**
   * Why the caller's token no longer holds (expired, its user removed), or null while it holds:
   * asked every FEED_EXPIRY_CHECK_MS.
   */
  readonly expired: () => string | null;
  readonly onEnd: (stream: EventStream) => void;
}

export class EventStream implements Subscriber {
  readonly table: string;
  private current: { read: ReadGroup; key: ReadGroup } | null;
  private behind = 0;
  private ended = false;
  private readonly timers: NodeJS.Timeout[] = [];

  constructor(
    private readonly raw: ServerResponse,
    private readonly options: EventStreamOptions,
  ) {
    this.table = options.table;
    this.current = options.groups;
    raw.on('drain', () => {
      this.behind = 0;
    });
    raw.on('close', () => this.end());
    this.timers.push(
      setInterval(() => this.write(': keep-alive\n\n'), FEED_HEARTBEAT_MS),
      setInterval(() => {
        const reason = this.options.expired();
        if (reason !== null) this.finish('expired', JSON.stringify({ reason }));
      }, FEED_EXPIRY_CHECK_MS),
    );
    for (const timer of this.timers) timer.unref();
  }

  get closed(): boolean {
    return this.ended;
  }

  readonly groups = (): { read: ReadGroup; key: ReadGroup } | null => this.current;

  send(delivery: Delivery): number {
    if (this.ended) return 0;
    // Each transaction is counted as if written alone (past the buffer's high-water mark, its
    // events are behind), but the socket gets them all in one write: corked, they go out
    // together at the uncork.
    this.raw.cork();
    let offset = 0;
    let written = 0;
    for (const part of delivery.parts) {
      if (this.raw.writableNeedDrain) {
        this.behind += part.events;
        if (this.behind > this.options.maxLag || this.raw.writableLength > FEED_MAX_LAG_BYTES) {
          this.raw.uncork();
          this.overflow();
          // The transactions written before the overflow are what the client gets.
          return written;
        }
      }
      this.raw.write(delivery.bytes.subarray(offset, offset + part.bytes));
      offset += part.bytes;
      written += part.events;
    }
    this.raw.uncork();
    return written;
  }

  reshape(table: TableInfo): void {
    try {
      this.current = this.options.compile(table);
    } catch (error) {
      const { code, message } = error as { code?: string; message?: string };
      this.current = null;
      // The stream's own options no longer fit the table's new columns.
      setImmediate(() =>
        this.finish('error', JSON.stringify({ code: code ?? 'INVALID_QUERY', message })),
      );
    }
  }

  overflow(): void {
    this.finish(
      'overflow',
      '{"reason":"the client fell too far behind; reconnect with Last-Event-ID"}',
    );
  }

  fail(id: string, code: string, message: string): void {
    if (this.ended) return;
    this.raw.write(`id: ${id}\n`);
    this.finish('error', JSON.stringify({ code, message }));
  }

  /** Ends the stream with a last event (the gateway stopping sends none). */
  finish(event: string | null, data = '{}'): void {
    if (this.ended) return;
    if (event !== null) this.raw.write(`event: ${event}\ndata: ${data}\n\n`);
    this.raw.end();
    this.end();
  }

  private write(text: string): void {
    if (!this.ended) this.raw.write(text);
  }

  private end(): void {
    if (this.ended) return;
    this.ended = true;
    for (const timer of this.timers) clearInterval(timer);
    this.options.onEnd(this);
  }
}
