/**
 * One webhook's delivery (docs/webhooks.md): a subscriber of the change feed (changes/hub.ts)
 * like a stream, under its role's view, whose events are POSTed to its URL one at a time, in
 * commit order, signed as Standard Webhooks says. A 2xx is delivery; anything else is tried
 * again after an exponential backoff with jitter (WEBHOOK_FIRST_RETRY_MS doubling up to
 * WEBHOOK_MAX_RETRY_MS) until the event has been failing for `maxAgeMs`, then it is a dead
 * letter (stored, logged, counted) and the next event goes. The place of the last event done in
 * the binary log is stored (store.ts) whenever the queue is empty, and at least every
 * WEBHOOK_STORE_EVERY_MS while it is not: a restart goes on right after it (a crash sends again
 * what was delivered since, with the same ids).
 *
 * The feed never waits for a webhook: its events queue here up to WEBHOOK_QUEUE_EVENTS; past
 * that (a receiver down for long) the subscription is dropped, the queue delivered, and the
 * webhook subscribes again from its last stored place, which the feed reads back from the
 * binary log. Memory stays bounded and nothing is lost while the log holds the place.
 */
import { createHash } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import type { ChangeFeed, Delivery, Subscriber } from '../changes/hub.js';
import type { LogPosition } from '../changes/positions.js';
import { compileSubscription, type SubscriptionReads } from '../changes/subscription.js';
import type { TableInfo } from '../db/schema-types.js';
import type { Flavour } from '../execute/database.js';
import {
  WEBHOOK_ATTEMPT_TIMEOUT_MS,
  WEBHOOK_FIRST_RETRY_MS,
  WEBHOOK_LEASE_WAIT_MS,
  WEBHOOK_MAX_RETRY_MS,
  WEBHOOK_QUEUE_EVENTS,
  WEBHOOK_STORE_EVERY_MS,
} from '../limits.js';
import type { Log } from '../log.js';
import { VERSION } from '../version.js';
import type { WebhookDefinition } from './definitions.js';
import { type Poster, poster } from './post.js';
import type { WebhookStore } from './store.js';

/** What a webhook's deliveries count (metrics/metrics.ts), by webhook name. */
export interface WebhookCounters {
  delivered(webhook: string): void;
  failed(webhook: string): void;
  dead(webhook: string): void;
}

/** An event waiting for its delivery. */
interface Pending {
  readonly position: LogPosition;
  /** `webhook-id`: the same for every attempt, on every gateway. */
  readonly messageId: string;
  readonly op: string;
  /** The event object the stream sends (docs/changes.md, "Events"): the request body. */
  readonly body: string;
  attempts: number;
  /** When the first attempt was made (ms); 0 before it. */
  firstAttempt: number;
  lastError: string;
  /** Delivered or dead: only its place is left to store. */
  done: boolean;
}

export interface DeliveryOptions {
  readonly feed: ChangeFeed;
  readonly store: WebhookStore;
  readonly flavour: Flavour;
  readonly maxAgeMs: number;
  readonly log: Log;
  readonly counters: WebhookCounters | null;
}

/** The wait before attempt `attempts + 1`: doubling from the first retry, half of it random. */
export function retryDelay(attempts: number, random = Math.random()): number {
  const base = Math.min(WEBHOOK_MAX_RETRY_MS, WEBHOOK_FIRST_RETRY_MS * 2 ** (attempts - 1));
  return Math.round(base / 2 + (base / 2) * random);
}

/** `webhook-id` of an event: its webhook, transaction (GTID where there is one) and place. */
export function messageId(webhook: string, position: LogPosition): string {
  const transaction = position.gtid !== '' ? position.gtid : `${position.file}:${position.start}`;
  const digest = createHash('sha256')
    .update(`${webhook}\u0000${transaction}\u0000${position.index}`)
    .digest('base64url');
  return `msg_${digest.slice(0, 27)}`;
}

const USER_AGENT = `tablegate/${VERSION}`;

export class WebhookDelivery implements Subscriber {
  readonly table: string;
  private reads: SubscriptionReads | null;
  private readonly signer: Webhook;
  private readonly poster: Poster;
  private readonly queue: Pending[] = [];
  /** Whether the feed hands it events now. */
  private subscribed = false;
  /** Events were dropped: subscribe again from the last stored place once the queue is done. */
  private behind = false;
  /** This gateway holds the lease and delivers. */
  private active = false;
  /** The delivery loop while it runs (pump). */
  private pumping: Promise<void> | null = null;
  /** Where the stored place is: events up to it are done. */
  private last: LogPosition | null = null;
  /** The last event done and not yet stored (its place is stored at most every WEBHOOK_STORE_EVERY_MS). */
  private doneUpTo: LogPosition | null = null;
  private storedAt = 0;
  private wake: (() => void) | null = null;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    readonly definition: WebhookDefinition,
    table: TableInfo,
    private readonly options: DeliveryOptions,
  ) {
    this.table = definition.table;
    this.reads = this.compile(table);
    this.signer = new Webhook(definition.secret);
    this.poster = poster(definition.url, WEBHOOK_ATTEMPT_TIMEOUT_MS);
  }

  // The feed's side (changes/hub.ts Subscriber).

  readonly groups = (): SubscriptionReads | null => this.reads;

  get closed(): boolean {
    return !this.subscribed;
  }

  send({ text, events }: Delivery): number {
    if (!this.subscribed) return 0;
    for (const event of parseEvents(text)) {
      if (this.wanted(event.op)) {
        const position = this.options.feed.positions.open(event.id);
        this.queue.push({
          position,
          messageId: messageId(this.definition.name, position),
          op: event.op,
          body: event.data,
          attempts: 0,
          firstAttempt: 0,
          lastError: '',
          done: false,
        });
      }
    }
    if (this.queue.length > WEBHOOK_QUEUE_EVENTS) this.fallBehind();
    void this.pump();
    return events;
  }

  reshape(table: TableInfo): void {
    this.reads = this.compile(table);
  }

  overflow(): void {
    this.fallBehind();
  }

  finish(): void {
    this.halt();
  }

  /** Its events could not be decided: delivery goes on from the place stored, as after falling behind. */
  fail(): void {
    this.fallBehind();
  }

  // The gateway's side (webhooks.ts).

  /** This gateway took the lease: deliver from the stored place (or from now, the first time). */
  async start(): Promise<void> {
    if (this.active) return;
    this.active = true;
    const { feed, store } = this.options;
    try {
      let since = await store.position(this.definition.name);
      if (since === null) {
        since = feed.head();
        await store.advance(this.definition.name, since);
      }
      this.last = since;
    } catch (error) {
      this.active = false;
      throw error;
    }
    await this.subscribe();
  }

  /**
   * The lease is gone or the gateway stops: nothing more is delivered and what is queued is
   * dropped; an attempt under way is cut off at once (a receiver that hangs does not hold up a
   * stop) and whoever holds the lease next makes it again, with its id (at least once). The
   * place of what was done is stored.
   */
  async stop(): Promise<void> {
    this.halt();
    this.poster.abort();
    await this.pumping;
    this.poster.close();
  }

  private halt(): void {
    this.active = false;
    if (this.subscribed) this.options.feed.unsubscribe(this);
    this.subscribed = false;
    this.behind = false;
    this.queue.length = 0;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.wake?.();
  }

  get delivering(): boolean {
    return this.active;
  }

  private wanted(op: string): boolean {
    return op === 'truncate' || this.definition.events.has(op as 'insert');
  }

  private compile(table: TableInfo): SubscriptionReads | null {
    try {
      return compileSubscription(
        table,
        this.definition.options,
        this.definition.access,
        this.options.flavour,
      );
    } catch (error) {
      // The table's new columns no longer fit its select or filter: it sends nothing until the
      // file is fixed and the gateway restarted.
      this.options.log.error(
        { webhook: this.definition.name, reason: (error as Error).message },
        `webhook ${this.definition.name}: its filter or select no longer fits table ${table.name}; it delivers nothing until the webhooks file is fixed`,
      );
      return null;
    }
  }

  private async subscribe(): Promise<void> {
    if (!this.active || this.subscribed) return;
    this.subscribed = true;
    try {
      await this.options.feed.subscribe(this, this.last);
    } catch (error) {
      this.subscribed = false;
      this.options.log.error(
        { webhook: this.definition.name, reason: (error as Error).message },
        `webhook ${this.definition.name}: cannot resume after its last delivered event; ${(error as Error).message}`,
      );
    }
  }

  private fallBehind(): void {
    if (!this.subscribed) return;
    this.options.feed.unsubscribe(this);
    this.subscribed = false;
    this.behind = true;
  }

  /** Delivers the queue, one event at a time; the only loop of this webhook. */
  private pump(): Promise<void> {
    this.pumping ??= this.deliverQueue().finally(() => {
      this.pumping = null;
      // An event queued while the loop was ending finds it gone: go on for it.
      if (this.active && this.queue.length > 0) void this.pump();
    });
    return this.pumping;
  }

  private async deliverQueue(): Promise<void> {
    while (this.active && this.queue.length > 0) {
      const head = this.queue[0] as Pending;
      if (!head.done) {
        // An attempt only while the lease is sure to outlast it (and a second to spare): a
        // gateway whose renewals fail stops here, before another can take the lease over.
        if (!this.options.store.holdsFor(this.definition.name, WEBHOOK_ATTEMPT_TIMEOUT_MS + 1000)) {
          await this.sleep(WEBHOOK_LEASE_WAIT_MS);
          continue;
        }
        head.done = await this.attempt(head);
        if (!head.done) {
          // Stopped during the attempt: no wait for a retry that this gateway will not make.
          if (!this.active) break;
          await this.storePlace();
          await this.sleep(this.untilNext(head));
          continue;
        }
      }
      if (this.queue[0] === head) this.queue.shift();
      this.doneUpTo = head.position;
      if (Date.now() - this.storedAt >= WEBHOOK_STORE_EVERY_MS) await this.storePlace();
    }
    // The queue is delivered (or the webhook stops): its place is stored now.
    await this.storePlace();
    if (this.active && this.behind && this.queue.length === 0) {
      this.behind = false;
      await this.subscribe();
    }
  }

  /** One POST; true when the event is done with (delivered, or past its age and dead). */
  private async attempt(event: Pending): Promise<boolean> {
    const { name } = this.definition;
    const now = Date.now();
    if (event.firstAttempt === 0) event.firstAttempt = now;
    event.attempts += 1;
    const sentAt = new Date(now);
    try {
      const status = await this.poster.post(
        {
          'content-type': 'application/json',
          'user-agent': USER_AGENT,
          'webhook-id': event.messageId,
          'webhook-timestamp': String(Math.floor(now / 1000)),
          'webhook-signature': this.signer.sign(event.messageId, sentAt, event.body),
        },
        event.body,
      );
      if (status >= 200 && status < 300) {
        this.options.counters?.delivered(name);
        return true;
      }
      event.lastError = `HTTP ${status}`;
    } catch (error) {
      const { code, message } = error as { code?: string; message?: string };
      // Cut off by a stop: not the receiver's failure, and never a dead letter.
      if (!this.active) return false;
      event.lastError = code ?? message ?? String(error);
    }
    this.options.counters?.failed(name);
    if (Date.now() - event.firstAttempt < this.options.maxAgeMs) return false;
    await this.bury(event);
    return true;
  }

  /** The wait before the next attempt; the last one falls at the end of the event's age. */
  private untilNext(event: Pending): number {
    const left = event.firstAttempt + this.options.maxAgeMs - Date.now();
    return Math.max(0, Math.min(retryDelay(event.attempts), left));
  }

  private async bury(event: Pending): Promise<void> {
    const { name } = this.definition;
    this.options.counters?.dead(name);
    this.options.log.warn(
      {
        webhook: name,
        code: 'WEBHOOK_DEAD_LETTER',
        messageId: event.messageId,
        attempts: event.attempts,
        lastError: event.lastError,
      },
      `webhook ${name}: gave up on ${event.op} event ${event.messageId} after ${event.attempts} attempts (${event.lastError}); it is a dead letter`,
    );
    await this.options.store
      .deadLetter({
        webhook: name,
        messageId: event.messageId,
        event: event.body,
        attempts: event.attempts,
        lastError: event.lastError,
        firstAttemptAt: new Date(event.firstAttempt).toISOString().slice(0, 23).replace('T', ' '),
      })
      .catch((error: unknown) =>
        this.options.log.error(
          { webhook: name, reason: (error as Error).message },
          `webhook ${name}: cannot store dead letter ${event.messageId}`,
        ),
      );
  }

  /**
   * Stores the place of the last event done (delivered, or given up on). A lease found gone
   * stops the webhook here: another gateway delivers it now. MySQL not answering: the place is
   * stored next time (a restart meanwhile sends those events again, with their ids).
   */
  private async storePlace(): Promise<void> {
    const place = this.doneUpTo;
    if (place === null) return;
    try {
      const held = await this.options.store.advance(this.definition.name, place);
      if (!held) {
        this.options.log.warn(
          { webhook: this.definition.name },
          `webhook ${this.definition.name}: another gateway holds its lease now; this one stops delivering it`,
        );
        this.halt();
        return;
      }
      if (this.doneUpTo === place) this.doneUpTo = null;
      this.last = place;
      this.storedAt = Date.now();
    } catch (error) {
      this.options.log.warn(
        { webhook: this.definition.name, reason: (error as Error).message },
        `webhook ${this.definition.name}: cannot store its position; trying again`,
      );
    }
  }

  private sleep(ms: number): Promise<void> {
    if (!this.active) return Promise.resolve();
    return new Promise((resolve) => {
      this.wake = resolve;
      this.timer = setTimeout(() => {
        this.timer = null;
        this.wake = null;
        resolve();
      }, ms);
    });
  }
}

/** The events of one transaction's SSE text (changes/hub.ts framesOf): id, event and data. */
export function parseEvents(text: string): { id: string; op: string; data: string }[] {
  const events: { id: string; op: string; data: string }[] = [];
  for (const block of text.split('\n\n')) {
    let id = '';
    let op = '';
    let data = '';
    for (const line of block.split('\n')) {
      if (line.startsWith('id: ')) id = line.slice(4);
      else if (line.startsWith('event: ')) op = line.slice(7);
      else if (line.startsWith('data: ')) data = line.slice(6);
    }
    if (id !== '' && op !== '' && data !== '') events.push({ id, op, data });
  }
  return events;
}
