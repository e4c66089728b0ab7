/**
 * The cluster drill's change-feed subscriber (docs/changes.md): one EventSource on
 * `GET /table/events/changes` through the HTTP HAProxy, open across every fault. It reconnects
 * with Last-Event-ID by itself (to whichever gateway HAProxy picks), and counts the insert
 * events of each row, so the drill can say how many rows committed during the faults never
 * arrived (must be 0) and how many arrived more than once (allowed across reconnects).
 */
import { EventSource } from 'eventsource';

export class FeedWatcher {
  constructor(base, token) {
    /** Insert events by the row's `ref`. */
    this.inserts = new Map();
    this.events = 0;
    this.opens = 0;
    this.ended = [];
    this.lastEventAt = Date.now();
    this.source = new EventSource(`${base}/table/events/changes?$select=id,ref`, {
      fetch: (url, init) =>
        fetch(url, { ...init, headers: { ...init.headers, authorization: `Bearer ${token}` } }),
    });
    this.source.onopen = () => {
      this.opens += 1;
    };
    this.source.addEventListener('insert', (message) => {
      const { ref } = JSON.parse(message.data).row;
      this.inserts.set(ref, (this.inserts.get(ref) ?? 0) + 1);
      this.events += 1;
      this.lastEventAt = Date.now();
    });
    for (const name of ['update', 'delete']) {
      this.source.addEventListener(name, () => {
        this.events += 1;
        this.lastEventAt = Date.now();
      });
    }
    // A stream the gateway ended on purpose (overflow, expired, error): said in the results.
    for (const name of ['overflow', 'expired', 'error']) {
      this.source.addEventListener(name, (message) => {
        if (message.data !== undefined) this.ended.push(`${name} ${message.data}`);
      });
    }
  }

  async opened(timeoutMs = 15_000) {
    const deadline = Date.now() + timeoutMs;
    while (this.opens === 0) {
      if (Date.now() > deadline) throw new Error('the change feed did not open');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** Waits until no event came for `quietMs` (or `timeoutMs` passed). */
  async quiet(quietMs = 3000, timeoutMs = 60_000) {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() - this.lastEventAt < quietMs && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  /** Rows of `refs` (committed after the watcher opened) without an insert event, or with two. */
  account(refs) {
    let missed = 0;
    let twice = 0;
    for (const ref of refs) {
      const count = this.inserts.get(ref) ?? 0;
      if (count === 0) missed++;
      if (count > 1) twice++;
    }
    return { rows: refs.length, missed, twice, reconnects: this.opens - 1, ended: this.ended };
  }

  close() {
    this.source.close();
  }
}
