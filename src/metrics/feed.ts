/**
 * The change feed's Prometheus metrics (docs/changes.md, "Metrics"), on the gateway's registry
 * (metrics.ts): subscribers now, events sent (a counter: `rate()` gives events a second), how
 * far the feed is behind the binary log, and whether its binary-log connection streams. Read
 * from the feed at each scrape: the feed's hot path counts into plain fields only.
 */
import type { Registry } from 'prom-client';
import type { ChangeFeed } from '../changes/hub.js';
import { scrapedCounter, scrapedGauge } from './scraped.js';

export function registerFeedMetrics(registry: Registry, feed: ChangeFeed): void {
  scrapedGauge(
    registry,
    'tablegate_feed_subscribers',
    'Change-feed streams open now (GET /table/<t>/changes)',
    () => feed.subscriberCount,
  );
  scrapedCounter(
    registry,
    'tablegate_feed_events_total',
    'Change-feed events sent to subscribers (rate() gives events a second)',
    () => feed.eventsSent,
  );
  scrapedCounter(
    registry,
    'tablegate_feed_decision_failures_total',
    'Change-feed decisions that failed (each try; a failed one is tried again, then its streams end with event: error)',
    () => feed.decisionFailures,
  );
  scrapedCounter(
    registry,
    'tablegate_feed_streams_failed_total',
    'Change-feed streams ended with event: error because their changes could not be decided (they resume with Last-Event-ID)',
    () => feed.streamsFailed,
  );
  scrapedGauge(
    registry,
    'tablegate_feed_lag_seconds',
    'Seconds from a transaction commit to its events going out, for the last one handled; at least the age of the oldest one waiting (commit times are whole seconds)',
    () => feed.lagSeconds,
  );
  scrapedGauge(
    registry,
    'tablegate_feed_binlog_connected',
    'Whether the change feed reads the binary log now: 1, or 0 while its connection is reopened (or the feed is off)',
    () => (feed.connected ? 1 : 0),
  );
}
