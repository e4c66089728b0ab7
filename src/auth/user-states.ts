/**
 * Revocation of the gateway's own tokens: a token names its user's id, role and password
 * version (auth/users.ts); it is good only while the user still exists with that role and that
 * password. Checking MySQL on every request would cost a round trip each, so this keeps the
 * state of the users seen lately, read again every USER_STATE_REFRESH_MS for all of them in a
 * few statements, and trusts an entry for at most USER_STATE_STALE_MS after the read that made
 * it began: a removal, a role change or a new password stops the user's tokens within that
 * bound (docs/auth.md), on every gateway, whether or not the refresh could run.
 */
import {
  USER_STATE_BATCH,
  USER_STATE_IDLE_MS,
  USER_STATE_REFRESH_MS,
  USER_STATE_STALE_MS,
} from '../limits.js';
import type { AuthClaims } from './tokens.js';

/** What a token is checked against: the user as the users table has them now. */
export interface UserState {
  readonly role: string;
  readonly passwordVersion: string;
}

/** The states of the users with these ids; an id without a row is a removed user. */
export type UserStateSource = (ids: readonly string[]) => Promise<ReadonlyMap<string, UserState>>;

interface Entry {
  /** null: no such user (removed). */
  state: UserState | null;
  /** Date.now() when the read that gave `state` began. */
  checkedAt: number;
  /** Date.now() of the last request that asked: entries nobody asks for are dropped. */
  usedAt: number;
}

export class UserStates {
  private readonly entries = new Map<string, Entry>();
  private readonly loading = new Map<string, Promise<void>>();
  private timer: NodeJS.Timeout | null = null;
  private refreshing = false;

  constructor(private readonly source: UserStateSource) {}

  /**
   * Whether an own token's user is still as the token says: true or false when a fresh enough
   * entry knows; undefined when it must be read first (load). Synchronous: the guard's fast path.
   */
  current(claims: AuthClaims, now: number): boolean | undefined {
    const entry = this.entries.get(claims.sub);
    if (entry === undefined || now - entry.checkedAt > USER_STATE_STALE_MS) return undefined;
    entry.usedAt = now;
    const state = entry.state;
    return (
      state !== null &&
      state.role === claims.role &&
      state.passwordVersion === claims.passwordVersion
    );
  }

  /** Reads one user's state now; requests for the same id at once share one read. */
  load(id: string): Promise<void> {
    let pending = this.loading.get(id);
    if (pending === undefined) {
      const startedAt = Date.now();
      pending = this.source([id])
        .then((states) => this.store(id, states.get(id) ?? null, startedAt))
        .finally(() => this.loading.delete(id));
      this.loading.set(id, pending);
    }
    return pending;
  }

  /** What a login or a password change just read or wrote. */
  remember(id: string, state: UserState | null, checkedAt = Date.now()): void {
    this.store(id, state, checkedAt);
  }

  private store(id: string, state: UserState | null, checkedAt: number): void {
    const entry = this.entries.get(id);
    if (entry === undefined) {
      this.entries.set(id, { state, checkedAt, usedAt: checkedAt });
    } else if (checkedAt >= entry.checkedAt) {
      entry.state = state;
      entry.checkedAt = checkedAt;
    }
  }

  /** Reads every entry in use again; drops those nobody asked for in USER_STATE_IDLE_MS. */
  async refresh(): Promise<void> {
    if (this.refreshing) return;
    this.refreshing = true;
    try {
      const startedAt = Date.now();
      const ids: string[] = [];
      for (const [id, entry] of this.entries) {
        if (startedAt - entry.usedAt > USER_STATE_IDLE_MS) this.entries.delete(id);
        else ids.push(id);
      }
      for (let at = 0; at < ids.length; at += USER_STATE_BATCH) {
        const batch = ids.slice(at, at + USER_STATE_BATCH);
        const states = await this.source(batch);
        for (const id of batch) this.store(id, states.get(id) ?? null, startedAt);
      }
    } finally {
      this.refreshing = false;
    }
  }

  /** Refreshes on a timer that never keeps the process alive; `failed` hears each failure. */
  start(failed: (error: unknown) => void): void {
    if (this.timer !== null) return;
    this.timer = setInterval(() => {
      this.refresh().catch(failed);
    }, USER_STATE_REFRESH_MS);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  /** How many users are watched (tests, metrics). */
  get size(): number {
    return this.entries.size;
  }
}
