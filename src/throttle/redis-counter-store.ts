/**
 * Counters in Redis (`--redis-url`), so that every gateway of one database counts a client
 * together. One Lua script per add keeps "start a window or add to it" atomic. While Redis cannot
 * be reached, counts fall back to this process (the limits still hold, per gateway) and go back
 * to Redis when it answers again.
 */
import { Redis } from 'ioredis';
import { type CounterStore, MemoryCounterStore, type WindowCount } from './counter-store.js';

/** Every key starts with this and the database name: gateways of other databases never meet. */
export const KEY_PREFIX = 'tablegate:';

/** Longest a command may take before this add is counted in the process instead. */
const COMMAND_TIMEOUT_MS = 1000;
/** Longest wait between two reconnection attempts after Redis went away. */
const MAX_RECONNECT_DELAY_MS = 2000;

/**
 * KEYS[1]: the counter; ARGV: amount, window in ms. Answers {count, ms until the window ends}.
 * Same rules as MemoryCounterStore: a window starts at the first add to a key with none, a
 * negative amount never starts one, and the count never goes below zero.
 */
const ADD_SCRIPT = `
local amount = tonumber(ARGV[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  if amount < 0 then return {0, 0} end
  redis.call('SET', KEYS[1], amount, 'PX', ARGV[2])
  return {amount, tonumber(ARGV[2])}
end
local count = redis.call('INCRBY', KEYS[1], amount)
if count < 0 then
  redis.call('SET', KEYS[1], 0, 'KEEPTTL')
  count = 0
end
return {count, ttl}
`;

type ScriptedRedis = Redis & {
  tablegateAdd(key: string, amount: number, windowMs: number): Promise<[number, number]>;
};

/** What the store tells the gateway's log; both are called once per outage. */
export interface RedisEvents {
  unavailable(reason: string): void;
  restored(): void;
}

/** The URL without its password, for messages. */
export function redactedUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(not a URL)';
  }
}

export class RedisCounterStore implements CounterStore {
  readonly shared = true;
  private readonly fallback = new MemoryCounterStore();
  private down = false;
  /** Replaced by the gateway once its logger exists. */
  events: RedisEvents = { unavailable: () => {}, restored: () => {} };

  private constructor(
    private readonly client: ScriptedRedis,
    private readonly prefix: string,
  ) {}

  /**
   * Connects to `url` (`redis://[:password@]host[:port][/db]`, `rediss://` for TLS) and answers
   * the store for `database`; rejects with the reason when Redis does not answer.
   */
  static async open(url: string, database: string): Promise<RedisCounterStore> {
    let connected = false;
    let lastError: Error | undefined;
    const client = new Redis(url, {
      lazyConnect: true,
      // At start one refusal is the answer (the gateway exits); later, keep trying.
      retryStrategy: (times) => (connected ? Math.min(times * 100, MAX_RECONNECT_DELAY_MS) : null),
      // Fail at once while disconnected (the add is counted in the process) instead of queueing.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: COMMAND_TIMEOUT_MS,
      connectTimeout: 5000,
    }) as ScriptedRedis;
    client.on('error', (error: Error) => {
      lastError = error;
    });
    client.defineCommand('tablegateAdd', { numberOfKeys: 1, lua: ADD_SCRIPT });
    try {
      await client.connect();
    } catch (error) {
      client.disconnect();
      throw lastError ?? error;
    }
    connected = true;
    return new RedisCounterStore(client, `${KEY_PREFIX}${database}:`);
  }

  async add(key: string, amount: number, windowMs: number): Promise<WindowCount> {
    try {
      const [count, resetInMs] = await this.client.tablegateAdd(
        this.prefix + key,
        amount,
        windowMs,
      );
      if (this.down) {
        this.down = false;
        this.events.restored();
      }
      return { count, resetInMs };
    } catch (error) {
      if (!this.down) {
        this.down = true;
        this.events.unavailable(error instanceof Error ? error.message : String(error));
      }
      return this.fallback.add(key, amount, windowMs);
    }
  }

  async close(): Promise<void> {
    // quit() waits for the answers to commands sent; without a connection there are none.
    if (this.client.status === 'ready') await this.client.quit().catch(() => {});
    this.client.disconnect();
  }
}
