/**
 * What route modules are given: configuration, the database, the schema cache, in auth mode users
 * and tokens, and the policy of `--policy` when there is one.
 */

import type { Authenticator } from './auth/authenticator.js';
import type { OwnTokens } from './auth/tokens.js';
import type { UserStates } from './auth/user-states.js';
import type { UserStore } from './auth/users.js';
import type { ChangeFeed } from './changes/hub.js';
import type { Config } from './config.js';
import type { SchemaCache } from './db/schema.js';
import type { Database } from './execute/database.js';
import type { Log } from './log.js';
import type { GatewayMetrics } from './metrics/metrics.js';
import type { Skiptokens } from './pipeline/skiptoken.js';
import type { Policy } from './policy/policy.js';
import type { CounterStore } from './throttle/counter-store.js';
import type { FileLinks } from './uploads/file-links.js';
import type { UploadStorage } from './uploads/storage.js';

export interface AuthServices {
  readonly users: UserStore;
  /** Signs (and verifies) the tokens of own users. */
  readonly tokens: OwnTokens;
  /** Who a Bearer token says the caller is: own tokens, and a provider's when configured. */
  readonly authenticator: Authenticator;
  /** Own users' roles and password versions, for revocation. */
  readonly states: UserStates;
  /** Signs upload accessURLs and opens them. */
  readonly fileLinks: FileLinks;
  /** Where login and registration counts live; in this process when absent. */
  readonly counters?: CounterStore;
}

export interface Services {
  readonly config: Config;
  readonly db: Database;
  readonly schema: SchemaCache;
  /** Where uploads are kept and looked up (uploads/storage.ts). */
  readonly uploads: UploadStorage;
  /** Where the gateway logs (log.ts). */
  readonly log: Log;
  /** Seals and opens the `$skiptoken`s of paged reads (pipeline/skiptoken.ts). */
  readonly skiptokens: Skiptokens;
  /** Present exactly when `config.mode` is `auth` (buildServer refuses auth mode without it). */
  readonly auth?: AuthServices;
  /** `--policy`: absent when everything is allowed (docs/policies.md). */
  readonly policy?: Policy;
  /** `--metrics-port`: absent when metrics are off (then nothing counts). */
  readonly metrics?: GatewayMetrics;
  /** `--change-feed`: `GET /table/<t>/changes` (docs/changes.md); absent: the route is not served. */
  readonly feed?: ChangeFeed;
  /** `--shutdown-delay`: set while the gateway drains before closing (then /health is 503). */
  readonly shutdown?: ShutdownState;
}

export interface ShutdownState {
  draining: boolean;
}
