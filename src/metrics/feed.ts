/**
 * The change feed's Prometheus metrics (docs/changes.md, "Metrics"), on the gateway's registry
 * (metrics.ts): subscribers now, events sent (a counter: `rate()` gives events a second), how
 * far the feed is behind the binary log, and whether its binary-log connection streams. Read
 * from the feed at each scrape: the feed's hot path counts into plain fields only.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { ChangeFeed } from '../changes/hub.js';

export function registerFeedMetrics(registry: Registry, feed: ChangeFeed): void {
  const registers = [registry];
  new Gauge({
    name: 'tablegate_feed_subscribers',
    help: 'Change-feed streams open now (GET /table/<t>/changes)',
    registers,
    collect() {
      this.set(feed.subscriberCount);
    },
  });
  let counted = 0;
  new Counter({
    name: 'tablegate_feed_events_total',
    help: 'Change-feed events sent to subscribers (rate() gives events a second)',
    registers,
    collect() {
      const sent = feed.eventsSent;
      this.inc(sent - counted);
      counted = sent;
    },
  });
  let failures = 0;
  new Counter({
    name: 'tablegate_feed_decision_failures_total',
    help: 'Change-feed decisions that failed (each try; a failed one is tried again, then its streams end with event: error)',
    registers,
    collect() {
      const now = feed.decisionFailures;
      this.inc(now - failures);
      failures = now;
    },
  });
  let failed = 0;
  new Counter({
    name: 'tablegate_feed_streams_failed_total',
    help: 'Change-feed streams ended with event: error because their changes could not be decided (they resume with Last-Event-ID)',
    registers,
    collect() {
      const now = feed.streamsFailed;
      this.inc(now - failed);
      failed = now;
    },
  });
  new Gauge({
    name: 'tablegate_feed_lag_seconds',
    help: 'Seconds from a transaction commit to its events going out, for the last one handled; at least the age of the oldest one waiting (commit times are whole seconds)',
    registers,
    collect() {
      this.set(feed.lagSeconds);
    },
  });
  new Gauge({
    name: 'tablegate_feed_binlog_connected',
    help: 'Whether the change feed reads the binary log now: 1, or 0 while its connection is reopened (or the feed is off)',
    registers,
    collect() {
      this.set(feed.connected ? 1 : 0);
    },
  });
}
