/**
 * What route modules are given: configuration, the database, the schema cache, in auth mode users
 * and tokens, and the policy of `--policy` when there is one.
 */

import type { TokenService } from './auth/tokens.js';
import type { UserStore } from './auth/users.js';
import type { Config } from './config.js';
import type { SchemaCache } from './db/schema.js';
import type { Database } from './execute/database.js';
import type { Log } from './log.js';
import type { GatewayMetrics } from './metrics/metrics.js';
import type { Skiptokens } from './pipeline/skiptoken.js';
import type { Policy } from './policy/policy.js';
import type { CounterStore } from './throttle/counter-store.js';

export interface AuthServices {
  readonly users: UserStore;
  readonly tokens: TokenService;
  /** Where login and registration counts live; in this process when absent. */
  readonly counters?: CounterStore;
}

export interface Services {
  readonly config: Config;
  readonly db: Database;
  readonly schema: SchemaCache;
  /** Where the gateway logs (log.ts). */
  readonly log: Log;
  /** Seals and opens the `$skiptoken`s of paged reads (pipeline/skiptoken.ts). */
  readonly skiptokens: Skiptokens;
  /** Present exactly when `config.mode` is `auth` (buildServer refuses auth mode without it). */
  readonly auth?: AuthServices;
  /** `--policy`: absent when everything is allowed (CONTRACT §6). */
  readonly policy?: Policy;
  /** `--metrics-port`: absent when metrics are off (then nothing counts). */
  readonly metrics?: GatewayMetrics;
  /** `--shutdown-delay`: set while the gateway drains before closing (then /health is 503). */
  readonly shutdown?: ShutdownState;
}

export interface ShutdownState {
  draining: boolean;
}
