/**
 * The gateway's configuration: one typed object built by the CLI from flags and environment,
 * with the defaults docs/configuration.md lists. Nothing else reads process.env.
 */
import os from 'node:os';
import path from 'node:path';
import type { ClaimNames } from './auth/claims.js';
import type { CsvFormulas } from './db/csv-rows.js';
import type { DbConfig, ReadConsistency } from './db/pool.js';

export type Mode = 'auth' | 'open';
/** Whether `POST /auth/register` makes users (docs/policies.md). */
export type Registration = 'open' | 'closed';

export interface Config {
  readonly mode: Mode;
  readonly db: DbConfig;
  /** HTTP port to listen on (`-o`). */
  readonly listenPort: number;
  /** Address to bind; all interfaces by default, as a container needs. */
  readonly listenHost: string;
  /** What `accessURL` starts with; when absent, `http://<Host header>`. */
  readonly baseUrl: string | null;
  readonly jwtSecret: string | null;
  /** `--token-ttl` in seconds: the lifetime of the tokens `POST /auth/login` gives. */
  readonly tokenTtlSeconds: number;
  /** Where the generated JWT secret is kept when none is given. */
  readonly stateDir: string;
  readonly uploadsDir: string;
  readonly maxFileSize: number;
  readonly maxFiles: number;
  readonly bodyLimit: number;
  readonly corsOrigin: string;
  readonly logLevel: string;
  /** Milliseconds a statement may run before the server stops it (504). */
  readonly queryTimeoutMs: number;
  /** Milliseconds a streamed read may wait for a client that takes nothing (then it is cut). */
  readonly stallTimeoutMs: number;
  /** Least milliseconds between two re-reads of the schema for a name the cache does not know. */
  readonly schemaRefreshMs: number;
  readonly registration: Registration;
  /**
   * `--odata-basic`: auth mode accepts `Authorization: Basic` with an own user's email and
   * password on `/odata/` routes (docs/odata-batch.md); absent means on.
   */
  readonly odataBasic?: 'on' | 'off';
  /** The role of a user made by `POST /auth/register`. */
  readonly defaultRole: string;
  /** `--policy`: absolute path of the policy file, or null for none (docs/policies.md). */
  readonly policyFile: string | null;
  /**
   * Which proxies' X-Forwarded-For to believe (Fastify's `trustProxy`): false (the socket's
   * address is the client), true (every hop), a hop count, or proxy addresses and CIDRs.
   */
  readonly trustProxy: TrustProxy;
  /**
   * Requests one client address may have in progress at once (429 past it); 0: no cap. The pool
   * is shared fairly between addresses without it (execute/acquire.ts).
   */
  readonly maxClientRequests: number;
  /**
   * Milliseconds a statement of a request without a token may run (open mode: every request);
   * null: `queryTimeoutMs`.
   */
  readonly anonymousQueryTimeoutMs: number | null;
  /**
   * Bytes per second a streamed read's client must take while the gateway waits for it,
   * measured over waits of `stallTimeoutMs`; slower, it is cut. 0: no minimum.
   */
  readonly minReadRate: number;
  /**
   * Bytes an answer built whole before it is sent may take (docs/reading.md); past it the read
   * answers 400 ANSWER_TOO_LARGE, and nothing of the answer is sent.
   */
  readonly maxAnswerBytes: number;
  /** Rows an MCP `read_rows` call answers at most (`--mcp-max-rows`); it says when more exist. */
  readonly mcpMaxRows: number;
  /** Entities an OData collection answers per page at most (`--odata-max-page`, docs/odata.md). */
  readonly odataMaxPage: number;
  /**
   * The highest cost estimate a read may have (`--max-read-cost`, docs/reading.md "Cost
   * limits"); 0: no limit. Absent: DEFAULTS.maxReadCost.
   */
  readonly maxReadCost?: number;
  /**
   * The same for the `anonymous` role (`--max-read-cost-anonymous`); absent: the smaller of
   * DEFAULTS.maxReadCostAnonymous and a non-zero `maxReadCost`.
   */
  readonly maxReadCostAnonymous?: number;
  /** Milliseconds a JSON body may take to arrive after the headers (408 past it). */
  readonly bodyTimeoutMs: number;
  /** Open HTTP connections at once; more are closed at once. */
  readonly maxConnections: number;
  /** `--metrics-port`: where Prometheus metrics are served (`GET /metrics`); null: none. */
  readonly metricsPort: number | null;
  /** Address the metrics listener binds; loopback unless said otherwise. */
  readonly metricsHost: string;
  /** `--redis-url`: where auth mode's login and registration counts are shared; null: in process. */
  readonly redisUrl: string | null;
  /**
   * `--shutdown-delay`: milliseconds between SIGTERM and closing, while `/health` answers 503 and
   * requests are still served, so a load balancer stops sending new ones first; 0: close at once.
   */
  readonly shutdownDelayMs: number;
  /** `--read-consistency`: what a read waits for on a Galera or Group Replication node. */
  readonly readConsistency: ReadConsistency;
  /**
   * `--skiptoken-secret`: what `$skiptoken`s are sealed with; null: the JWT secret (auth mode's,
   * or the one kept in the state directory). Gateways behind one load balancer share it.
   */
  readonly skiptokenSecret: string | null;
  /** `--jwks-url` or `--jwt-public-key` and what its tokens must say; null: own tokens only. */
  readonly identityProvider: IdentityProvider | null;
  /** `--file-url-ttl` in seconds: how long a signed upload accessURL opens its file. */
  readonly fileUrlTtlSeconds: number;
  /**
   * `--change-feed`: `GET /table/<t>/changes` from the binary log (docs/changes.md). `auto`: on
   * when the server can serve it, else off with the reason said at start-up; `on`: a server
   * that cannot is a start-up error; `off`: the route answers 503.
   */
  readonly changeFeed?: ChangeFeedMode;
  /** `--feed-max-lag`: events a subscriber may fall behind before it is closed (overflow). */
  readonly feedMaxLag?: number;
  /**
   * Transactions the change feed keeps in memory for subscribers that resume (default
   * FEED_RECENT_TRANSACTIONS); an older position is read again from the binary log. No flag:
   * tests set it small to reach the binary-log catch-up.
   */
  readonly feedMemoryTransactions?: number;
  /** `--csv-formulas`: whether CSV text cells a spreadsheet would run as formulas are escaped. */
  readonly csvFormulas: CsvFormulas;
  /** `--webhooks`: the webhooks file (docs/webhooks.md); null or absent: no webhooks. */
  readonly webhooksFile?: string | null;
  /** `--webhook-max-age`: how long a failing delivery is retried before it is a dead letter. */
  readonly webhookMaxAgeMs?: number;
}

export type ChangeFeedMode = 'auto' | 'on' | 'off';

/** An identity provider whose tokens are accepted beside the gateway's own (docs/auth.md). */
export interface IdentityProvider {
  /** Where its JWKS is fetched from; null when the keys are in `publicKeyFile`. */
  readonly jwksUrl: string | null;
  /** Absolute path of a PEM public key, a JWK or a JWK set; null with `jwksUrl`. */
  readonly publicKeyFile: string | null;
  /** What `iss` must be. */
  readonly issuer: string;
  /** What `aud` must be (or hold). */
  readonly audience: string;
  /** `--user-id-claim`, `--email-claim`, `--role-claim`. */
  readonly claims: ClaimNames;
}

export type TrustProxy = boolean | number | readonly string[];

export const MiB = 1024 * 1024;

export function defaultStateDir(): string {
  return path.join(os.homedir(), '.tablegate');
}

export const DEFAULTS = {
  listenHost: '0.0.0.0',
  tokenTtl: '1h',
  tokenTtlSeconds: 3600,
  fileUrlTtlSeconds: 3600,
  maxFileSize: 100 * MiB,
  maxFiles: 20,
  bodyLimit: MiB,
  corsOrigin: '*',
  logLevel: 'info',
  poolSize: 10,
  queryTimeoutMs: 30_000,
  stallTimeoutMs: 30_000,
  schemaRefreshMs: 1000,
  defaultRole: 'user',
  trustProxy: false,
  // The pool is shared fairly between addresses; a cap would refuse a busy honest client (a
  // backend, a proxy, a load test) with nobody else waiting (docs/operations.md).
  maxClientRequests: 0,
  // Below the slowest network browsers emulate (GPRS, 50 kbit/s ≈ 6 KB/s): no phone still
  // online is cut (docs/operations.md).
  minReadRate: 4096,
  // Past any ordinary answer built whole (a small read is at most 256 KiB by its plan, a held
  // page 1 MiB): only a row with tens of megabytes of related rows or TEXT reaches it, and a
  // few dozen such answers at once still fit a gateway's memory (docs/reading.md).
  maxAnswerBytes: 64 * MiB,
  // An agent's context is small: a page of rows, and a note on how to read the next.
  mcpMaxRows: 100,
  odataMaxPage: 1000,
  // Row reads a read's lambdas and one answer row's expansions may cost (plan/read-cost.ts),
  // about a quarter of a second of MariaDB's time: every read of the docs, of the benchmark and
  // of a Sakila-sized schema estimates at a quarter of it or less, the nested fan-outs of a
  // 10,000-item shop at 8 to 20 times it (docs/reading.md, "Cost limits").
  maxReadCost: 250_000,
  // The `anonymous` role, anyone at all: 2.5 times stricter, still above Sakila's largest read
  // (a staff member's 8,000 payments expanded: 64,528).
  maxReadCostAnonymous: 100_000,
  bodyTimeoutMs: 30_000,
  // Below the smallest common open-file limit (1,024), with room for the pool, uploads and logs.
  maxConnections: 900,
  // Metrics are not public unless asked for: Prometheus in a pod or container needs 0.0.0.0.
  metricsHost: '127.0.0.1',
  shutdownDelayMs: 0,
  // The server's own behaviour: no wait, the cheapest reads (docs/operations.md).
  readConsistency: 'eventual',
  changeFeed: 'auto',
  // A burst of a few thousand rows (one bulk update) passes; a client that stopped reading
  // does not hold the gateway's memory for long (docs/changes.md).
  feedMaxLag: 10_000,
  // A cell written by one user and opened by another in a spreadsheet runs nothing.
  csvFormulas: 'escape',
  // A receiver down for a day still gets every event once it is back.
  webhookMaxAgeMs: 24 * 60 * 60 * 1000,
} as const;
