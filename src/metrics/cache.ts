/**
 * The answer cache's Prometheus metrics (docs/caching.md, "Metrics"), on the gateway's registry
 * (metrics.ts): hits, misses and entries dropped (counters), and the bytes and entries kept.
 * Read from the cache at each scrape: its hot path counts into plain fields only.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { AnswerCache } from '../cache/answer-cache.js';

function counter(registry: Registry, name: string, help: string, read: () => number): void {
  let counted = 0;
  new Counter({
    name,
    help,
    registers: [registry],
    collect() {
      const now = read();
      this.inc(now - counted);
      counted = now;
    },
  });
}

export function registerCacheMetrics(registry: Registry, cache: AnswerCache): void {
  counter(
    registry,
    'tablegate_cache_hits_total',
    'Reads answered from the answer cache (--cache), with no statement sent to MySQL',
    () => cache.hits,
  );
  counter(
    registry,
    'tablegate_cache_misses_total',
    'Reads the answer cache had no answer for (while it serves)',
    () => cache.misses,
  );
  counter(
    registry,
    'tablegate_cache_drops_total',
    'Answers dropped from the cache because a table they read changed (or all of them: DDL, a routine call, the binary-log connection lost or back)',
    () => cache.drops,
  );
  new Gauge({
    name: 'tablegate_cache_bytes',
    help: 'Bytes the answer cache holds (bodies, keys and a fixed cost per entry)',
    registers: [registry],
    collect() {
      this.set(cache.bytes);
    },
  });
  new Gauge({
    name: 'tablegate_cache_entries',
    help: 'Answers the answer cache holds',
    registers: [registry],
    collect() {
      this.set(cache.count);
    },
  });
}
