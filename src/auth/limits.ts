/**
 * What one client may cost auth mode. Login attempts are counted BEFORE the password is checked
 * (a burst of parallel guesses cannot all pass a check made before any of them is counted) and
 * taken back when the login succeeds, so the counts are of failures and of logins in flight.
 * Every argon2 hash or verification runs through one bounded queue, so a flood of logins (valid
 * or not) from one client costs other users a short wait at most. Counts live in a CounterStore.
 * The queue's running and waiting bounds are per process (they guard this process's CPU); its
 * per-client share is counted in the store when the store is shared (Redis: every gateway
 * together), else by the queue itself — one mechanism at a time, never both.
 */
import os from 'node:os';
import { normalizeIP } from '@fastify/rate-limit';
import { serverBusy, tooManyAttempts, tooManyConcurrent, tooManyRequests } from '../errors.js';
import {
  ARGON2_MAX_CONCURRENCY,
  ARGON2_MAX_WAITING,
  ARGON2_PER_CLIENT,
  ARGON2_SHARED_WINDOW_MS,
  LIMITS_WINDOW_MS,
  MAX_FAILED_LOGINS,
  MAX_FAILED_LOGINS_PER_IP,
  MAX_REGISTRATIONS_PER_IP,
} from '../limits.js';
import {
  type CounterStore,
  MemoryCounterStore,
  type WindowCount,
} from '../throttle/counter-store.js';
import { WorkQueue, type WorkQueueLimits, WorkRefused } from '../throttle/work-queue.js';
import { normalizeEmail } from './users.js';

export const ARGON2_QUEUE: WorkQueueLimits = {
  concurrency: Math.max(1, Math.min(ARGON2_MAX_CONCURRENCY, os.availableParallelism())),
  perClient: ARGON2_PER_CLIENT,
  maxWaiting: ARGON2_MAX_WAITING,
};

/** The client's address as limits count it: IPv6 clients are grouped by /64. */
export function clientAddress(ip: string): string {
  // Text without a colon cannot be IPv6: what normalizeIP gives it, without its IPv6 test (a long
  // regex that ran on every request of the per-client cap).
  return ip.includes(':') ? normalizeIP(ip, 64) : ip.toLowerCase();
}

export function loginAttemptKey(ip: string, email: string): string {
  return `login\n${clientAddress(ip)}\n${normalizeEmail(email)}`;
}

/** A counted login attempt; `succeeded()` takes it back. */
export interface LoginAttempt {
  succeeded(): Promise<void>;
}

function seconds(count: WindowCount): number {
  return Math.max(1, Math.ceil(count.resetInMs / 1000));
}

export class AuthLimits {
  private readonly argon2: WorkQueue;

  constructor(private readonly store: CounterStore) {
    // A shared store counts the per-client share (hashing below): the queue leaves it alone.
    this.argon2 = new WorkQueue(
      store.shared ? { ...ARGON2_QUEUE, perClient: Number.POSITIVE_INFINITY } : ARGON2_QUEUE,
    );
  }

  /**
   * Counts an attempt for (address, email) and for the address, refusing with 429 past either
   * limit; a refused attempt is not counted. Call it before verifying the password.
   */
  async beginLogin(ip: string, email: string): Promise<LoginAttempt> {
    const keys = [loginAttemptKey(ip, email), `login\n${clientAddress(ip)}`];
    const limits = [MAX_FAILED_LOGINS, MAX_FAILED_LOGINS_PER_IP];
    const refusals = [tooManyAttempts, tooManyRequests];
    const counted: string[] = [];
    const takeBack = () =>
      Promise.all(counted.map((key) => this.store.add(key, -1, LIMITS_WINDOW_MS))).then(() => {});
    for (const [i, key] of keys.entries()) {
      const count = await this.store.add(key, 1, LIMITS_WINDOW_MS);
      counted.push(key);
      if (count.count > (limits[i] as number)) {
        await takeBack();
        throw (refusals[i] as typeof tooManyAttempts)(seconds(count));
      }
    }
    return { succeeded: takeBack };
  }

  /** Counts a registration from the address; 429 past the limit. */
  async countRegistration(ip: string): Promise<void> {
    const key = `register\n${clientAddress(ip)}`;
    const count = await this.store.add(key, 1, LIMITS_WINDOW_MS);
    if (count.count > MAX_REGISTRATIONS_PER_IP) {
      await this.store.add(key, -1, LIMITS_WINDOW_MS);
      throw tooManyRequests(seconds(count));
    }
  }

  /**
   * Runs argon2 work for the address through the queue: 429 when the address has
   * ARGON2_PER_CLIENT hashes running or waiting (on every gateway, with a shared store), 503
   * when this process's queue is full.
   */
  async hashing<T>(ip: string, task: () => Promise<T>): Promise<T> {
    const client = clientAddress(ip);
    if (!this.store.shared) return this.queued(client, task);
    // Counted before queueing, so a burst spread over gateways is counted whole (as logins are).
    const key = `argon2\n${client}`;
    const count = await this.store.add(key, 1, ARGON2_SHARED_WINDOW_MS);
    try {
      if (count.count > ARGON2_PER_CLIENT) throw tooManyConcurrent();
      return await this.queued(client, task);
    } finally {
      await this.store.add(key, -1, ARGON2_SHARED_WINDOW_MS);
    }
  }

  private async queued<T>(client: string, task: () => Promise<T>): Promise<T> {
    try {
      return await this.argon2.run(client, task);
    } catch (error) {
      if (!(error instanceof WorkRefused)) throw error;
      throw error.reason === 'client-busy' ? tooManyConcurrent() : serverBusy();
    }
  }
}

const limitsByServices = new WeakMap<object, AuthLimits>();

/**
 * The one AuthLimits of a gateway's auth services: `/auth/login` and Basic credentials on
 * `/odata/` (auth/basic.ts) count failures and share the argon2 queue together.
 */
export function authLimitsOf(auth: { readonly counters?: CounterStore }): AuthLimits {
  let limits = limitsByServices.get(auth);
  if (limits === undefined) {
    limits = new AuthLimits(auth.counters ?? new MemoryCounterStore());
    limitsByServices.set(auth, limits);
  }
  return limits;
}
