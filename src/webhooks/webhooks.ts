/**
 * The webhooks of one gateway (docs/webhooks.md, `--webhooks`): one delivery per webhook of the
 * file (delivery.ts), each delivering only while this gateway holds its lease (store.ts). Every
 * WEBHOOK_LEASE_RENEW_MS the leases held are renewed and the free ones taken; so with several
 * gateways on one database exactly one delivers each webhook, and when its holder dies another
 * takes over once the lease has run out (WEBHOOK_LEASE_MS). A gateway that stops lets its leases
 * go at once.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { ChangeFeed } from '../changes/hub.js';
import type { SchemaCache } from '../db/schema.js';
import type { Database } from '../execute/database.js';
import { WEBHOOK_LEASE_MS, WEBHOOK_LEASE_RENEW_MS } from '../limits.js';
import type { Log } from '../log.js';
import type { WebhookDefinition } from './definitions.js';
import { type WebhookCounters, WebhookDelivery } from './delivery.js';
import { ensureWebhookTables, WebhookStore } from './store.js';

export interface WebhooksOptions {
  readonly definitions: readonly WebhookDefinition[];
  readonly feed: ChangeFeed;
  readonly db: Database;
  readonly schema: SchemaCache;
  readonly log: Log;
  readonly maxAgeMs: number;
  readonly counters: WebhookCounters | null;
}

export class Webhooks {
  private timer: NodeJS.Timeout | null = null;
  private renewing: Promise<void> = Promise.resolve();
  private stopped = false;

  private constructor(
    private readonly deliveries: readonly WebhookDelivery[],
    private readonly store: WebhookStore,
    private readonly log: Log,
  ) {}

  /** Creates the tables if missing, takes the leases it can and starts delivering those. */
  static async open(options: WebhooksOptions): Promise<Webhooks> {
    const { db, feed, schema, log } = options;
    await ensureWebhookTables(db);
    // Unique per process, readable in the table: which machine holds a webhook.
    const holder = `${hostname().slice(0, 40)}:${process.pid}:${randomBytes(4).toString('hex')}`;
    const store = new WebhookStore(db, holder, WEBHOOK_LEASE_MS);
    const deliveries: WebhookDelivery[] = [];
    for (const definition of options.definitions) {
      const table = await schema.find(definition.table);
      if (table === undefined) continue;
      deliveries.push(
        new WebhookDelivery(definition, table, {
          feed,
          store,
          flavour: db.flavour,
          maxAgeMs: options.maxAgeMs,
          log,
          counters: options.counters,
        }),
      );
    }
    const webhooks = new Webhooks(deliveries, store, log);
    await webhooks.renew();
    webhooks.timer = setInterval(() => {
      webhooks.renewing = webhooks.renewing.then(() => webhooks.renew());
    }, WEBHOOK_LEASE_RENEW_MS);
    webhooks.timer.unref();
    return webhooks;
  }

  /** The names of the webhooks this gateway delivers now. */
  get delivering(): string[] {
    return this.deliveries.filter((d) => d.delivering).map((d) => d.definition.name);
  }

  /** Stops delivering and lets every lease go (another gateway takes over at once). */
  async close(): Promise<void> {
    this.stopped = true;
    if (this.timer !== null) clearInterval(this.timer);
    await this.renewing;
    await Promise.all(this.deliveries.map((delivery) => delivery.stop()));
    await Promise.all(
      this.deliveries.map((delivery) =>
        this.store.release(delivery.definition.name).catch(() => {}),
      ),
    );
  }

  private async renew(): Promise<void> {
    for (const delivery of this.deliveries) {
      if (this.stopped) return;
      const { name } = delivery.definition;
      try {
        const held = await this.store.lease(name);
        if (held && !delivery.delivering) await delivery.start();
        else if (!held && delivery.delivering) {
          this.log.warn(
            { webhook: name },
            `webhook ${name}: another gateway holds its lease now; this one stops delivering it`,
          );
          await delivery.stop();
        }
      } catch (error) {
        // MySQL not answering: keep what we have; the lease decides again next round.
        this.log.warn(
          { webhook: name, reason: (error as Error).message },
          `webhook ${name}: cannot renew its lease`,
        );
      }
    }
  }
}
