/**
 * A change-feed client for tests (docs/changes.md): the `eventsource` package, as a Node or
 * browser app reads `GET /table/<t>/changes`, keeping every event in arrival order. It
 * reconnects with `Last-Event-ID` by itself, as every EventSource does.
 */
import { EventSource } from 'eventsource';

export interface Received {
  readonly event: string;
  readonly id: string;
  readonly data: Record<string, unknown>;
}

const EVENTS = ['insert', 'update', 'delete', 'truncate', 'schema', 'overflow', 'expired', 'error'];

export interface FeedClient {
  readonly source: EventSource;
  readonly events: Received[];
  /** Times the stream opened (the first time, then each reconnect). */
  readonly opens: () => number;
  /** Resolves when the stream opened `count` times in all. */
  opened(count?: number, ms?: number): Promise<void>;
  /** The events once there are `count` of them, or when `ms` passed. */
  until(count: number, ms?: number): Promise<Received[]>;
  close(): void;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function feedClient(url: string, headers: Record<string, string> = {}): FeedClient {
  const events: Received[] = [];
  let opens = 0;
  const source = new EventSource(url, {
    fetch: (input, init) =>
      fetch(input, { ...init, headers: { ...(init?.headers as object), ...headers } }),
  });
  source.onopen = () => {
    opens += 1;
  };
  for (const event of EVENTS) {
    source.addEventListener(event, (message) => {
      const { data, lastEventId } = message as MessageEvent<string>;
      if (data !== undefined) events.push({ event, id: lastEventId, data: JSON.parse(data) });
    });
  }
  return {
    source,
    events,
    opens: () => opens,
    async opened(count = 1, ms = 15_000) {
      const deadline = Date.now() + ms;
      while (opens < count) {
        if (Date.now() > deadline) throw new Error(`the stream did not open ${count} times`);
        await sleep(20);
      }
    },
    async until(count, ms = 15_000) {
      const deadline = Date.now() + ms;
      while (events.length < count && Date.now() < deadline) await sleep(20);
      return events;
    },
    close: () => source.close(),
  };
}

/** Waits long enough for anything a change would have sent. */
export const settle = (ms = 700) => sleep(ms);
