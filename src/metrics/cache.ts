/**
 * The answer cache's Prometheus metrics (docs/caching.md, "Metrics"), on the gateway's registry
 * (metrics.ts): hits, misses and entries dropped (counters), and the bytes and entries kept.
 * Read from the cache at each scrape: its hot path counts into plain fields only.
 */
import type { Registry } from 'prom-client';
import type { AnswerCache } from '../cache/answer-cache.js';
import { scrapedCounter, scrapedGauge } from './scraped.js';

export function registerCacheMetrics(registry: Registry, cache: AnswerCache): void {
  scrapedCounter(
    registry,
    'tablegate_cache_hits_total',
    'Reads answered from the answer cache (--cache), with no statement sent to MySQL',
    () => cache.hits,
  );
  scrapedCounter(
    registry,
    'tablegate_cache_misses_total',
    'Reads the answer cache had no answer for (while it serves)',
    () => cache.misses,
  );
  scrapedCounter(
    registry,
    'tablegate_cache_drops_total',
    'Answers dropped from the cache because a table they read changed (or all of them: DDL, a routine call, the binary-log connection lost or back)',
    () => cache.drops,
  );
  scrapedGauge(
    registry,
    'tablegate_cache_bytes',
    'Bytes the answer cache holds (bodies, keys and a fixed cost per entry)',
    () => cache.bytes,
  );
  scrapedGauge(
    registry,
    'tablegate_cache_entries',
    'Answers the answer cache holds',
    () => cache.count,
  );
}
