/**
 * What one client may cost auth mode. Login attempts are counted BEFORE the password is checked
 * (a burst of parallel guesses cannot all pass a check made before any of them is counted) and
 * taken back when the login succeeds, so the counts are of failures and of logins in flight.
 * Every argon2 hash or verification runs through one bounded queue, so a flood of logins (valid
 * or not) from one client costs other users a short wait at most. Counts live in a CounterStore.
 */
import os from 'node:os';
import { normalizeIP } from '@fastify/rate-limit';
import { serverBusy, tooManyAttempts, tooManyConcurrent, tooManyRequests } from '../errors.js';
import type { CounterStore, WindowCount } from '../throttle/counter-store.js';
import { WorkQueue, type WorkQueueLimits, WorkRefused } from '../throttle/work-queue.js';
import { normalizeEmail } from './users.js';

/** CONTRACT §4: more than 10 failures in a minute for one IP and email → 429. */
export const MAX_FAILED_LOGINS = 10;
export const LIMITS_WINDOW_MS = 60_000;
/** Every registration and failed login costs ~20 ms of argon2: at most this many per minute and IP. */
export const MAX_REGISTRATIONS_PER_IP = 60;
export const MAX_FAILED_LOGINS_PER_IP = 100;

/**
 * argon2 runs on libuv's thread pool (4 threads), which file uploads and downloads also use: at
 * most 3 hashes at once (fewer on fewer cores) keep a thread free for them. One address may
 * have 8 hashes running or waiting; 32 may wait in all (a wait of well under a second).
 */
export const ARGON2_QUEUE: WorkQueueLimits = {
  concurrency: Math.max(1, Math.min(3, os.availableParallelism())),
  perClient: 8,
  maxWaiting: 32,
};

/** The client's address as limits count it: IPv6 clients are grouped by /64. */
export function clientAddress(ip: string): string {
  return normalizeIP(ip, 64);
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
  constructor(
    private readonly store: CounterStore,
    private readonly argon2 = new WorkQueue(ARGON2_QUEUE),
  ) {}

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

  /** Runs argon2 work for the address through the queue: 429 or 503 when it is full. */
  async hashing<T>(ip: string, task: () => Promise<T>): Promise<T> {
    try {
      return await this.argon2.run(clientAddress(ip), task);
    } catch (error) {
      if (!(error instanceof WorkRefused)) throw error;
      throw error.reason === 'client-busy' ? tooManyConcurrent() : serverBusy();
    }
  }
}
