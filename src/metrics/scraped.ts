/**
 * Metrics read at each scrape from a count or a value their owner keeps in a plain field, so
 * that its hot path never calls prom-client: a counter that goes on from the last value it saw,
 * and a gauge that shows the value now.
 */
import { Counter, Gauge, type Registry } from 'prom-client';

/**
 * A counter of what `read` has counted. When the count starts again from 0 (a pool opened
 * anew), the counter adds nothing for that scrape and goes on from there.
 */
export function scrapedCounter(
  registry: Registry,
  name: string,
  help: string,
  read: () => number,
): void {
  let counted = 0;
  new Counter({
    name,
    help,
    registers: [registry],
    collect() {
      const now = read();
      if (now > counted) this.inc(now - counted);
      counted = now;
    },
  });
}

export function scrapedGauge(
  registry: Registry,
  name: string,
  help: string,
  read: () => number,
): void {
  new Gauge({
    name,
    help,
    registers: [registry],
    collect() {
      this.set(read());
    },
  });
}
