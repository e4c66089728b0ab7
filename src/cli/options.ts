/**
 * argv and environment → Config, as docs/configuration.md describes: `run [auth] -h -u -p -P -D
 * -o`, long forms, TABLEGATE_* variables (a flag wins over the environment). Pure: it returns a
 * Config or throws UsageError, so it is tested without a process.
 */
import { isIP } from 'node:net';
import path from 'node:path';
import { DEFAULT_CLAIM_NAMES } from '../auth/claims.js';
import { MIN_SECRET_BYTES } from '../auth/tokens.js';
import { roleProblem } from '../auth/users.js';
import {
  type ChangeFeedMode,
  type Config,
  DEFAULTS,
  defaultStateDir,
  type IdentityProvider,
  type Registration,
  type TrustProxy,
} from '../config.js';
import type { CsvFormulas } from '../db/csv-rows.js';
import { type DbConfig, type DbHost, hostLabel, type ReadConsistency } from '../db/pool.js';
import { didYouMean } from './did-you-mean.js';

export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export const USAGE = `Usage
  tablegate run auth -h <host> -u <user> -p <password> -P <port> -D <database> -o <output_port>
  tablegate run      -h <host> -u <user> -p <password> -P <port> -D <database> -o <output_port>

  tablegate user add <email> [--role <role>]   -h <host> -u <user> -p <password> -P <port> -D <database>
  tablegate user set-role <email> <role>       (same connection flags)
  tablegate user set-password <email>          (same connection flags)
  tablegate user remove <email>                (same connection flags)
  tablegate user list                          (same connection flags)

  tablegate webhook dead-letters [<name>]      (same connection flags)

  tablegate demo [-o <output_port>]
  tablegate demo -h <host> -u <user> -p <password> -P <port> -D <empty database> [-o <output_port>]

  With 'auth' every request needs a JWT Bearer token from POST /auth/login.
  'user' manages the users of auth mode; 'user add' and 'user set-password' read the new
  password from TABLEGATE_USER_PASSWORD or, failing that, from standard input (never from a
  flag). With --policy <file> (or TABLEGATE_POLICY), a role the policy does not define is refused.
  'webhook dead-letters' lists the events webhooks gave up on, one JSON object a line.
  'demo' serves an example shop in auth mode on port 8080 (127.0.0.1), on a private MariaDB/MySQL
  server started from the PATH, or in the empty database given; it prints how to log in and query.

Database and listener (each also from the environment variable shown)
  -h, --host <host>          MySQL host or db1,db2:3307 TABLEGATE_DB_HOST
  -u, --user <user>          MySQL user                 TABLEGATE_DB_USER
  -p, --password <password>  MySQL password ('' = none) TABLEGATE_DB_PASSWORD
  -P, --port <port>          MySQL port                 TABLEGATE_DB_PORT
  -D, --database <name>      database to serve          TABLEGATE_DB_NAME
  -o, --listen <port>        HTTP port to listen on     TABLEGATE_LISTEN_PORT
                             the word 'auth'            TABLEGATE_AUTH=true

Options
  --base-url <url>           what accessURL starts with (default http://<Host header>)
  --jwt-secret <secret>      auth mode: HS256 secret, 32+ bytes  TABLEGATE_JWT_SECRET
  --token-ttl <ttl>          auth mode: token lifetime: 1h, 30m, 7d, 3600 (seconds) (default 1h)
  --file-url-ttl <ttl>       auth mode: how long a signed upload accessURL opens its file (default 1h)
  --uploads-dir <dir>        default ~/.tablegate/uploads
  --max-file-size <size>     per uploaded file (default 100MiB)
  --max-files <n>            per upload request (default 20)
  --body-limit <size>        JSON body limit (default 1MiB)
  --cors-origin <origin>     default *
  --log-level <level>        fatal, error, warn, info, debug, trace or silent (default info)
  --pool-size <n>            MySQL connections (default 10)
  --query-timeout <time>     longest a query may run (default 30s)
  --stall-timeout <time>     cut a streamed read whose client takes nothing this long (default 30s)
  --min-read-rate <size>     cut a streamed read whose client takes less a second, measured over
                             waits for it as long as --stall-timeout (default 4KiB; 0 = none)
  --max-answer-bytes <size>  largest answer built whole before it is sent; a larger one is
                             400 ANSWER_TOO_LARGE (default 64MiB)
  --mcp-max-rows <n>         rows an MCP read_rows call answers at most (default 100)
  --odata-max-page <n>       entities per page of an OData collection, then @odata.nextLink
                             (default 1000)
  --max-read-cost <n>        refuse a read whose cost estimate (row reads of its lambdas and
                             expansions) is past this, 400 QUERY_TOO_COSTLY (default 250000;
                             0 or off = no limit)
  --max-read-cost-anonymous <n>
                             the same for the anonymous role (default 100000, or --max-read-cost
                             when that is lower)
  --anonymous-query-timeout <time>
                             longest a query of a request without a token may run (default:
                             --query-timeout)
  --schema-refresh <time>    least time between two re-reads of the schema (default 1s)
  --listen-host <address>    address to bind (default 0.0.0.0)
  --registration <mode>      auth mode: open or closed POST /auth/register (default open)
  --odata-basic <on|off>     auth mode: accept Basic email:password of own users on /odata/
                             (default on)
  --default-role <role>      auth mode: role of a user made by POST /auth/register, and of a
                             provider's token that names no role the policy defines (default user)
  --policy <file>            who may do what: a JSON or YAML file (docs/policies.md); default none
  --trust-proxy <proxies>    believe X-Forwarded-For from these proxies: a hop count, addresses
                             or CIDRs (10.0.0.0/8,loopback), or true for any (default: none)
  --max-client-requests <n>  requests one client address may have in progress, then 429
                             (default 0 = no cap: the pool is shared fairly between addresses)
  --body-timeout <time>      longest a JSON body may take to arrive (default 30s)
  --max-connections <n>      open HTTP connections at once (default 900)
  --shutdown-delay <time>    on SIGTERM, keep serving but answer /health 503 this long before
                             closing, so a load balancer stops sending first (default 0s)
  --metrics-port <port>      serve Prometheus metrics at GET /metrics on this port (default: none)
  --metrics-host <address>   address the metrics port binds (default 127.0.0.1)
  --redis-url <url>          auth mode: count login and registration limits across gateways
                             in this Redis (redis://host:6379/0); default: per process
  --read-consistency <level> eventual, session or strict: whether a read on a Galera or Group
                             Replication node waits for the cluster's earlier writes (default eventual)
  --skiptoken-secret <secret> what $skiptoken links are sealed with, 32+ bytes, the same on every
                             gateway of one API (default: the JWT secret, or ~/.tablegate/jwt-secret)
  --change-feed <mode>       auto, on or off: GET /table/<t>/changes from the binary log
                             (default auto: on when the server's binary log allows it)
  --feed-max-lag <n>         events a change-feed subscriber may fall behind before it is
                             closed with event: overflow (default 10000)
  --csv-formulas <mode>      escape or keep CSV text cells a spreadsheet would run as formulas
                             (=, +, -, @ first): escape puts a ' in front (default escape)
  --webhooks <file>          POST each change to the URLs of this JSON file, signed (needs the
                             change feed; docs/webhooks.md)
  --webhook-max-age <time>   how long a failing webhook delivery is retried before it is a
                             dead letter (default 24h)
  --help                     this text

Identity provider (auth mode: its tokens are accepted beside the gateway's own)
  --jwks-url <url>           where its keys are (a JWKS), e.g. Keycloak's
                             https://sso.example.com/realms/shop/protocol/openid-connect/certs
  --jwt-public-key <file>    or its key in a file: a PEM public key, a JWK or a JWK set
  --jwt-issuer <iss>         required: what the tokens' iss must be
  --jwt-audience <aud>       required: what the tokens' aud must name
  --role-claim <path>        where the role is (default role; a dotted path such as
                             realm_access.roles; of a list, the first role the policy defines)
  --user-id-claim <path>     what @user.id is (default sub)
  --email-claim <path>       what @user.email is (default email)

Every option also reads TABLEGATE_<OPTION_NAME> (e.g. TABLEGATE_MAX_FILE_SIZE). An auth mode
option given to an open gateway is a usage error.`;

/** Raw option values as given on the command line; undefined when absent. */
export type RawFlags = Partial<Record<FlagName, string>>;

/** Long flag name (camel case) → environment variable. */
export const ENVIRONMENT: Readonly<Record<string, string>> = {
  host: 'TABLEGATE_DB_HOST',
  user: 'TABLEGATE_DB_USER',
  password: 'TABLEGATE_DB_PASSWORD',
  port: 'TABLEGATE_DB_PORT',
  database: 'TABLEGATE_DB_NAME',
  listen: 'TABLEGATE_LISTEN_PORT',
  baseUrl: 'TABLEGATE_BASE_URL',
  jwtSecret: 'TABLEGATE_JWT_SECRET',
  tokenTtl: 'TABLEGATE_TOKEN_TTL',
  uploadsDir: 'TABLEGATE_UPLOADS_DIR',
  maxFileSize: 'TABLEGATE_MAX_FILE_SIZE',
  maxFiles: 'TABLEGATE_MAX_FILES',
  bodyLimit: 'TABLEGATE_BODY_LIMIT',
  corsOrigin: 'TABLEGATE_CORS_ORIGIN',
  logLevel: 'TABLEGATE_LOG_LEVEL',
  poolSize: 'TABLEGATE_POOL_SIZE',
  queryTimeout: 'TABLEGATE_QUERY_TIMEOUT',
  stallTimeout: 'TABLEGATE_STALL_TIMEOUT',
  schemaRefresh: 'TABLEGATE_SCHEMA_REFRESH',
  listenHost: 'TABLEGATE_LISTEN_HOST',
  registration: 'TABLEGATE_REGISTRATION',
  odataBasic: 'TABLEGATE_ODATA_BASIC',
  defaultRole: 'TABLEGATE_DEFAULT_ROLE',
  policy: 'TABLEGATE_POLICY',
  trustProxy: 'TABLEGATE_TRUST_PROXY',
  maxClientRequests: 'TABLEGATE_MAX_CLIENT_REQUESTS',
  minReadRate: 'TABLEGATE_MIN_READ_RATE',
  maxAnswerBytes: 'TABLEGATE_MAX_ANSWER_BYTES',
  mcpMaxRows: 'TABLEGATE_MCP_MAX_ROWS',
  odataMaxPage: 'TABLEGATE_ODATA_MAX_PAGE',
  maxReadCost: 'TABLEGATE_MAX_READ_COST',
  maxReadCostAnonymous: 'TABLEGATE_MAX_READ_COST_ANONYMOUS',
  anonymousQueryTimeout: 'TABLEGATE_ANONYMOUS_QUERY_TIMEOUT',
  bodyTimeout: 'TABLEGATE_BODY_TIMEOUT',
  maxConnections: 'TABLEGATE_MAX_CONNECTIONS',
  metricsPort: 'TABLEGATE_METRICS_PORT',
  metricsHost: 'TABLEGATE_METRICS_HOST',
  redisUrl: 'TABLEGATE_REDIS_URL',
  shutdownDelay: 'TABLEGATE_SHUTDOWN_DELAY',
  readConsistency: 'TABLEGATE_READ_CONSISTENCY',
  skiptokenSecret: 'TABLEGATE_SKIPTOKEN_SECRET',
  changeFeed: 'TABLEGATE_CHANGE_FEED',
  feedMaxLag: 'TABLEGATE_FEED_MAX_LAG',
  csvFormulas: 'TABLEGATE_CSV_FORMULAS',
  webhooks: 'TABLEGATE_WEBHOOKS',
  webhookMaxAge: 'TABLEGATE_WEBHOOK_MAX_AGE',
  // Identity (docs/auth.md): an identity provider's tokens, signed file links.
  jwksUrl: 'TABLEGATE_JWKS_URL',
  jwtPublicKey: 'TABLEGATE_JWT_PUBLIC_KEY',
  jwtIssuer: 'TABLEGATE_JWT_ISSUER',
  jwtAudience: 'TABLEGATE_JWT_AUDIENCE',
  roleClaim: 'TABLEGATE_ROLE_CLAIM',
  userIdClaim: 'TABLEGATE_USER_ID_CLAIM',
  emailClaim: 'TABLEGATE_EMAIL_CLAIM',
  fileUrlTtl: 'TABLEGATE_FILE_URL_TTL',
};

export type FlagName = keyof typeof ENVIRONMENT;

export const SHORT_FLAGS: Readonly<Record<string, string>> = {
  host: 'h',
  user: 'u',
  password: 'p',
  port: 'P',
  database: 'D',
  listen: 'o',
};

export const FLAG_NAMES = Object.keys(ENVIRONMENT) as FlagName[];

function flagLabel(name: string): string {
  const long = `--${name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
  const short = SHORT_FLAGS[name];
  return short ? `-${short}/${long}` : long;
}

function pick(name: FlagName, flags: RawFlags, env: NodeJS.ProcessEnv): string | undefined {
  return flags[name] ?? env[ENVIRONMENT[name] as string];
}

function required(name: FlagName, flags: RawFlags, env: NodeJS.ProcessEnv): string {
  const value = pick(name, flags, env);
  if (value === undefined || (value === '' && name !== 'password')) {
    throw new UsageError(`missing required option ${flagLabel(name)} (or ${ENVIRONMENT[name]})`);
  }
  return value;
}

function integer(name: FlagName, text: string, min: number, max: number): number {
  if (!/^\d+$/.test(text.trim()) || Number(text) < min || Number(text) > max) {
    throw new UsageError(
      `${flagLabel(name)} must be a whole number from ${min} to ${max}, got '${text}'`,
    );
  }
  return Number(text);
}

const SIZE_UNITS: Readonly<Record<string, number>> = {
  '': 1,
  b: 1,
  k: 1024,
  kb: 1000,
  kib: 1024,
  m: 1024 ** 2,
  mb: 1000 ** 2,
  mib: 1024 ** 2,
  g: 1024 ** 3,
  gb: 1000 ** 3,
  gib: 1024 ** 3,
};

/** `1048576`, `512KiB`, `100MiB`, `2GB`. */
export function parseSize(name: FlagName, text: string): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(text);
  const unit = SIZE_UNITS[match?.[2]?.toLowerCase() ?? 'x'];
  if (!match || unit === undefined || Number(match[1]) * unit < 1) {
    throw new UsageError(
      `${flagLabel(name)} must be a size like 1048576, 512KiB or 100MiB, got '${text}'`,
    );
  }
  return Math.floor(Number(match[1]) * unit);
}

/** `30` (seconds), `30s`, `500ms`, `2m`. */
export function parseDuration(name: FlagName, text: string, allowZero = false): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m)?\s*$/i.exec(text);
  if (!match || Number(match[1]) < 0 || (Number(match[1]) === 0 && !allowZero)) {
    throw new UsageError(
      `${flagLabel(name)} must be a duration like 30s, 500ms or 2m, got '${text}'`,
    );
  }
  const factor = { ms: 1, s: 1000, m: 60_000 }[(match[2] ?? 's').toLowerCase() as 'ms' | 's' | 'm'];
  return Math.round(Number(match[1]) * factor);
}

/** One entry of `-h`: `db1`, `db1:3307`, `10.0.0.5:3306`, `::1` or `[::1]:3306`. */
function parseHost(entry: string, list: string, defaultPort: () => number): DbHost {
  const bad = (why: string) => new UsageError(`-h/--host '${list}': ${why}`);
  if (entry === '') throw bad('an empty entry (write hosts as db1,db2:3307)');
  let host = entry;
  let portText: string | undefined;
  if (entry.startsWith('[')) {
    const match = /^\[([^\]]*)\](?::(.*))?$/.exec(entry);
    if (!match || isIP(match[1] ?? '') !== 6) {
      throw bad(`'${entry}' is not an IPv6 address in brackets like [::1]:3306`);
    }
    host = match[1] as string;
    portText = match[2];
  } else if (/[[\]]/.test(entry)) {
    throw bad(`'${entry}' has a stray bracket (an IPv6 address is written [::1]:3306)`);
  } else if (entry.split(':').length === 2) {
    [host = '', portText] = entry.split(':');
  } else if (entry.includes(':') && isIP(entry) !== 6) {
    throw bad(`'${entry}' is not a host or host:port (an IPv6 address takes brackets: [::1]:3306)`);
  }
  if (host === '') throw bad(`'${entry}' names no host`);
  if (portText === undefined) return { host, port: defaultPort() };
  if (!/^\d{1,5}$/.test(portText) || Number(portText) < 1 || Number(portText) > 65535) {
    throw bad(`the port of '${entry}' must be a whole number from 1 to 65535`);
  }
  return { host, port: Number(portText) };
}

/**
 * `-h`: one host, or several separated by commas, each with its own port or `-P`'s. The gateway
 * uses the first that answers, and moves on to the next when it stops answering.
 */
export function parseHosts(text: string, defaultPort: () => number): DbHost[] {
  const hosts = text.split(',').map((entry) => parseHost(entry.trim(), text, defaultPort));
  const labels = hosts.map(hostLabel);
  const twice = labels.find((label, at) => labels.indexOf(label) !== at);
  if (twice !== undefined) throw new UsageError(`-h/--host '${text}': ${twice} is named twice`);
  return hosts;
}

/** The MySQL connection of `run` and `user`: `-h -u -p -P -D` and `--pool-size`. */
export function dbConfigFrom(flags: RawFlags, env: NodeJS.ProcessEnv, poolSize: number): DbConfig {
  const hostList = required('host', flags, env);
  const user = required('user', flags, env);
  const password = required('password', flags, env);
  // -P is needed only by a host that names no port of its own; given, it must be right anyway.
  const port = () => integer('port', required('port', flags, env), 1, 65535);
  if (pick('port', flags, env) !== undefined) port();
  const [first, ...otherHosts] = parseHosts(hostList, port) as [DbHost, ...DbHost[]];
  return {
    host: first.host,
    port: first.port,
    ...(otherHosts.length > 0 ? { otherHosts } : {}),
    user,
    password,
    database: required('database', flags, env),
    poolSize,
  };
}

const REGISTRATIONS: ReadonlySet<string> = new Set<Registration>(['open', 'closed']);
const CSV_FORMULAS: ReadonlySet<string> = new Set<CsvFormulas>(['escape', 'keep']);
const READ_CONSISTENCIES: ReadonlySet<string> = new Set<ReadConsistency>([
  'eventual',
  'session',
  'strict',
]);
const CHANGE_FEED_MODES: ReadonlySet<string> = new Set<ChangeFeedMode>(['auto', 'on', 'off']);
/** proxy-addr's names for ranges, besides addresses and CIDRs. */
const PROXY_RANGE_NAMES: ReadonlySet<string> = new Set(['loopback', 'linklocal', 'uniquelocal']);

function isAddressOrCidr(entry: string): boolean {
  const [address = '', prefix, extra] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || extra !== undefined) return false;
  if (prefix === undefined) return true;
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128);
}

/**
 * `--trust-proxy`: `true`/`false`, a hop count (`1`: the nearest proxy), or a comma-separated
 * list of proxy addresses, CIDRs and the names loopback, linklocal, uniquelocal.
 */
export function parseTrustProxy(text: string): TrustProxy {
  const value = text.trim().toLowerCase();
  if (value === '' || value === 'false') return false;
  if (value === 'true') return true;
  if (/^\d+$/.test(value))
    return Number(value) === 0 ? false : integer('trustProxy', value, 1, 100);
  const entries = value.split(',').map((entry) => entry.trim());
  const wrong = entries.find((entry) => !PROXY_RANGE_NAMES.has(entry) && !isAddressOrCidr(entry));
  if (wrong !== undefined) {
    throw new UsageError(
      `--trust-proxy takes true, a hop count, or addresses and CIDRs like 10.0.0.0/8,loopback; '${wrong}' is none of them`,
    );
  }
  return entries;
}

/** Seconds per unit of a lifetime, in the words `ms` (and so jsonwebtoken) took for them. */
const LIFETIME_UNITS: ReadonlyArray<[RegExp, number]> = [
  [/^(?:s|secs?|seconds?)$/, 1],
  [/^(?:m|mins?|minutes?)$/, 60],
  [/^(?:h|hrs?|hours?)$/, 3600],
  [/^(?:d|days?)$/, 86_400],
  [/^(?:w|weeks?)$/, 604_800],
  [/^(?:y|yrs?|years?)$/, 31_557_600],
];
/** Longer than any token should live; keeps `exp` a small number. */
const MAX_LIFETIME_SECONDS = 10 * 31_557_600;

/**
 * `--token-ttl`, `--file-url-ttl`: `3600` (seconds), `90s`, `30m`, `1h`, `1.5h`, `7d`, `2 weeks`
 * → whole seconds, at least 1.
 */
export function parseLifetime(name: FlagName, text: string): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(text);
  const unit = match?.[2] ?? '';
  const factor =
    unit === '' ? 1 : LIFETIME_UNITS.find(([words]) => words.test(unit.toLowerCase()))?.[1];
  const seconds = match && factor !== undefined ? Math.floor(Number(match[1]) * factor) : 0;
  if (seconds < 1 || seconds > MAX_LIFETIME_SECONDS) {
    throw new UsageError(
      `${flagLabel(name)} must be a duration like 1h, 30m, 7d or 3600 (seconds), got '${text}'`,
    );
  }
  return seconds;
}

/** The options that mean something only in auth mode: given in open mode, a usage error. */
const AUTH_ONLY: readonly FlagName[] = [
  'jwtSecret',
  'tokenTtl',
  'registration',
  'odataBasic',
  'defaultRole',
  'redisUrl',
  'jwksUrl',
  'jwtPublicKey',
  'jwtIssuer',
  'jwtAudience',
  'roleClaim',
  'userIdClaim',
  'emailClaim',
  'fileUrlTtl',
];

function refuseAuthOnly(flags: RawFlags, env: NodeJS.ProcessEnv): void {
  for (const name of AUTH_ONLY) {
    const given =
      flags[name] !== undefined
        ? flagLabel(name)
        : env[ENVIRONMENT[name] as string] !== undefined
          ? (ENVIRONMENT[name] as string)
          : null;
    if (given !== null) {
      throw new UsageError(
        `${given} is for auth mode: run 'tablegate run auth …' (or set TABLEGATE_AUTH=true), or leave it out`,
      );
    }
  }
}

/** `--jwt-secret`: at least MIN_SECRET_BYTES bytes (RFC 7518 §3.2); never echoed. */
function jwtSecretFrom(text: string | undefined): string | null {
  if (text === undefined) return null;
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes < MIN_SECRET_BYTES) {
    throw new UsageError(
      `--jwt-secret (or TABLEGATE_JWT_SECRET) must be at least ${MIN_SECRET_BYTES} bytes; it is ${bytes}`,
    );
  }
  return text;
}

/**
 * `--jwks-url` or `--jwt-public-key`, with `--jwt-issuer` and `--jwt-audience` (both required:
 * without them any token the provider signs, for any application, would do) and the claim
 * names; null when no provider is configured (then the others are refused too).
 */
export function identityProviderFrom(
  get: (name: FlagName) => string | undefined,
): IdentityProvider | null {
  const jwksUrl = get('jwksUrl');
  const publicKey = get('jwtPublicKey');
  if (jwksUrl !== undefined && publicKey !== undefined) {
    throw new UsageError('give --jwks-url or --jwt-public-key, not both');
  }
  const dependent: FlagName[] = [
    'jwtIssuer',
    'jwtAudience',
    'roleClaim',
    'userIdClaim',
    'emailClaim',
  ];
  if (jwksUrl === undefined && publicKey === undefined) {
    const stray = dependent.find((name) => get(name) !== undefined);
    if (stray !== undefined) {
      throw new UsageError(
        `${flagLabel(stray)} is for an identity provider's tokens: give --jwks-url or --jwt-public-key too`,
      );
    }
    return null;
  }
  if (jwksUrl !== undefined) {
    let url: URL | null = null;
    try {
      url = new URL(jwksUrl);
    } catch {
      // Said below.
    }
    if (url === null || (url.protocol !== 'https:' && url.protocol !== 'http:')) {
      throw new UsageError(`--jwks-url must be an http:// or https:// URL, got '${jwksUrl}'`);
    }
  }
  if (publicKey === '') throw new UsageError('--jwt-public-key needs a file name');
  const text = (name: FlagName, fallback?: string) => {
    const value = get(name) ?? fallback;
    if (value === undefined || value.trim() === '') {
      throw new UsageError(
        `${flagLabel(name)} is required with ${jwksUrl !== undefined ? '--jwks-url' : '--jwt-public-key'}: tokens are accepted only when their ${name === 'jwtIssuer' ? 'iss' : 'aud'} names it`,
      );
    }
    return value.trim();
  };
  const claim = (name: FlagName, fallback: string) => {
    const value = get(name) ?? fallback;
    if (value.trim() === '') throw new UsageError(`${flagLabel(name)} needs a claim name or path`);
    return value.trim();
  };
  return {
    jwksUrl: jwksUrl ?? null,
    publicKeyFile: publicKey === undefined ? null : path.resolve(publicKey),
    issuer: text('jwtIssuer'),
    audience: text('jwtAudience'),
    claims: {
      userId: claim('userIdClaim', DEFAULT_CLAIM_NAMES.userId),
      email: claim('emailClaim', DEFAULT_CLAIM_NAMES.email),
      role: claim('roleClaim', DEFAULT_CLAIM_NAMES.role),
    },
  };
}

/** The largest cost limit accepted: far past any estimate a read of a real schema reaches. */
const MAX_READ_COST = 1_000_000_000_000;

/**
 * `--max-read-cost` and `--max-read-cost-anonymous`: a whole number, or `off` (0); each only when
 * given, the server taking the defaults for the others (config.ts).
 */
function readCostLimits(get: (name: FlagName) => string | undefined): {
  maxReadCost?: number;
  maxReadCostAnonymous?: number;
} {
  const limit = (name: FlagName): number | undefined => {
    const text = get(name);
    if (text === undefined) return undefined;
    if (text.trim().toLowerCase() === 'off') return 0;
    return integer(name, text, 0, MAX_READ_COST);
  };
  const maxReadCost = limit('maxReadCost');
  const maxReadCostAnonymous = limit('maxReadCostAnonymous');
  return {
    ...(maxReadCost === undefined ? {} : { maxReadCost }),
    ...(maxReadCostAnonymous === undefined ? {} : { maxReadCostAnonymous }),
  };
}

const LOG_LEVELS = new Set(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']);

/** Builds the run configuration. `words` are the positional arguments after `run`. */
export function configFromRun(
  words: readonly string[],
  flags: RawFlags,
  env: NodeJS.ProcessEnv,
): Config {
  const extra = words.filter((w) => w !== 'auth');
  if (extra.length > 0 || words.length > 1) {
    const word = extra[0] ?? words[1] ?? '';
    throw new UsageError(`unexpected argument '${word}' after 'run'${didYouMean(word, ['auth'])}`);
  }
  const authFromEnv = env.TABLEGATE_AUTH?.toLowerCase();
  if (authFromEnv !== undefined && !['true', 'false', '1', '0', ''].includes(authFromEnv)) {
    throw new UsageError(`TABLEGATE_AUTH must be 'true' or 'false', got '${env.TABLEGATE_AUTH}'`);
  }
  const auth = words.includes('auth') || authFromEnv === 'true' || authFromEnv === '1';
  if (!auth) refuseAuthOnly(flags, env);
  const get = (name: FlagName) => pick(name, flags, env);
  const logLevel = get('logLevel') ?? DEFAULTS.logLevel;
  if (!LOG_LEVELS.has(logLevel)) {
    throw new UsageError(
      `--log-level must be one of ${[...LOG_LEVELS].join(', ')}, got '${logLevel}'`,
    );
  }
  const baseUrl = get('baseUrl');
  if (baseUrl !== undefined && !/^https?:\/\/[^\s/]+/i.test(baseUrl)) {
    throw new UsageError(`--base-url must start with http:// or https://, got '${baseUrl}'`);
  }
  const stateDir = defaultStateDir();
  const number = (name: FlagName, fallback: number, min: number, max: number) => {
    const text = get(name);
    return text === undefined ? fallback : integer(name, text, min, max);
  };
  const size = (name: FlagName, fallback: number) => {
    const text = get(name);
    return text === undefined ? fallback : parseSize(name, text);
  };
  const lifetime = (name: FlagName, fallback: number) => {
    const text = get(name);
    return text === undefined ? fallback : parseLifetime(name, text);
  };
  const duration = (name: FlagName, fallback: number) => {
    const text = get(name);
    return text === undefined ? fallback : parseDuration(name, text);
  };
  const optionalDuration = (name: FlagName) => {
    const text = get(name);
    return text === undefined ? null : parseDuration(name, text);
  };
  const minReadRate = get('minReadRate')?.trim();
  const registration = (get('registration') ?? 'open').toLowerCase();
  if (!REGISTRATIONS.has(registration)) {
    throw new UsageError(`--registration must be open or closed, got '${get('registration')}'`);
  }
  const odataBasic = (get('odataBasic') ?? 'on').toLowerCase();
  if (odataBasic !== 'on' && odataBasic !== 'off') {
    throw new UsageError(`--odata-basic must be on or off, got '${get('odataBasic')}'`);
  }
  const defaultRole = get('defaultRole') ?? DEFAULTS.defaultRole;
  const badRole = roleProblem(defaultRole);
  if (badRole !== null) throw new UsageError(`--default-role '${defaultRole}': ${badRole}`);
  const policy = get('policy');
  if (policy === '') throw new UsageError('--policy needs a file name');
  const trustProxy = get('trustProxy');
  const listenPort = integer('listen', required('listen', flags, env), 0, 65535);
  const metricsPortText = get('metricsPort');
  const metricsPort =
    metricsPortText === undefined || metricsPortText === ''
      ? null
      : integer('metricsPort', metricsPortText, 0, 65535);
  if (metricsPort !== null && metricsPort !== 0 && metricsPort === listenPort) {
    throw new UsageError(
      `--metrics-port must differ from the API's port ${listenPort}: metrics are never served on it`,
    );
  }
  const readConsistency = (get('readConsistency') ?? DEFAULTS.readConsistency).toLowerCase();
  if (!READ_CONSISTENCIES.has(readConsistency)) {
    throw new UsageError(
      `--read-consistency must be eventual, session or strict, got '${get('readConsistency')}'`,
    );
  }
  const changeFeed = (get('changeFeed') ?? DEFAULTS.changeFeed).toLowerCase();
  if (!CHANGE_FEED_MODES.has(changeFeed)) {
    throw new UsageError(`--change-feed must be auto, on or off, got '${get('changeFeed')}'`);
  }
  const csvFormulas = (get('csvFormulas') ?? DEFAULTS.csvFormulas).toLowerCase();
  if (!CSV_FORMULAS.has(csvFormulas)) {
    throw new UsageError(`--csv-formulas must be escape or keep, got '${get('csvFormulas')}'`);
  }
  const redisUrl = get('redisUrl');
  const shutdownDelay = get('shutdownDelay');
  const skiptokenSecret = get('skiptokenSecret');
  if (
    skiptokenSecret !== undefined &&
    Buffer.byteLength(skiptokenSecret, 'utf8') < MIN_SECRET_BYTES
  ) {
    throw new UsageError(
      `--skiptoken-secret must be at least ${MIN_SECRET_BYTES} bytes; it is ${Buffer.byteLength(skiptokenSecret, 'utf8')}`,
    );
  }
  if (redisUrl !== undefined && !/^rediss?:\/\/\S+$/i.test(redisUrl)) {
    throw new UsageError(`--redis-url must start with redis:// or rediss://, got '${redisUrl}'`);
  }
  return {
    mode: auth ? 'auth' : 'open',
    db: dbConfigFrom(flags, env, number('poolSize', DEFAULTS.poolSize, 1, 1000)),
    listenPort,
    listenHost: get('listenHost') ?? DEFAULTS.listenHost,
    baseUrl: baseUrl?.replace(/\/+$/, '') ?? null,
    jwtSecret: jwtSecretFrom(get('jwtSecret')),
    tokenTtlSeconds: lifetime('tokenTtl', DEFAULTS.tokenTtlSeconds),
    stateDir,
    uploadsDir: path.resolve(get('uploadsDir') ?? path.join(stateDir, 'uploads')),
    maxFileSize: size('maxFileSize', DEFAULTS.maxFileSize),
    maxFiles: number('maxFiles', DEFAULTS.maxFiles, 1, 10_000),
    bodyLimit: size('bodyLimit', DEFAULTS.bodyLimit),
    corsOrigin: get('corsOrigin') ?? DEFAULTS.corsOrigin,
    logLevel,
    queryTimeoutMs: duration('queryTimeout', DEFAULTS.queryTimeoutMs),
    stallTimeoutMs: duration('stallTimeout', DEFAULTS.stallTimeoutMs),
    schemaRefreshMs: duration('schemaRefresh', DEFAULTS.schemaRefreshMs),
    registration: registration as Registration,
    // Absent means on (config.ts): a config without the flag stays as it was.
    ...(get('odataBasic') === undefined ? {} : { odataBasic: odataBasic as 'on' | 'off' }),
    defaultRole,
    policyFile: policy === undefined ? null : path.resolve(policy),
    trustProxy: trustProxy === undefined ? DEFAULTS.trustProxy : parseTrustProxy(trustProxy),
    maxClientRequests: number('maxClientRequests', DEFAULTS.maxClientRequests, 0, 100_000),
    anonymousQueryTimeoutMs: optionalDuration('anonymousQueryTimeout'),
    minReadRate: minReadRate === '0' ? 0 : size('minReadRate', DEFAULTS.minReadRate),
    maxAnswerBytes: size('maxAnswerBytes', DEFAULTS.maxAnswerBytes),
    mcpMaxRows: number('mcpMaxRows', DEFAULTS.mcpMaxRows, 1, 10_000),
    odataMaxPage: number('odataMaxPage', DEFAULTS.odataMaxPage, 1, 100_000),
    ...readCostLimits(get),
    bodyTimeoutMs: duration('bodyTimeout', DEFAULTS.bodyTimeoutMs),
    maxConnections: number('maxConnections', DEFAULTS.maxConnections, 1, 1_000_000),
    metricsPort,
    metricsHost: get('metricsHost') || DEFAULTS.metricsHost,
    redisUrl: redisUrl ?? null,
    shutdownDelayMs:
      shutdownDelay === undefined
        ? DEFAULTS.shutdownDelayMs
        : parseDuration('shutdownDelay', shutdownDelay, true),
    readConsistency: readConsistency as ReadConsistency,
    skiptokenSecret: skiptokenSecret ?? null,
    identityProvider: identityProviderFrom(get),
    fileUrlTtlSeconds: lifetime('fileUrlTtl', DEFAULTS.fileUrlTtlSeconds),
    // Only when given: absent means the defaults (config.ts).
    ...(get('changeFeed') === undefined ? {} : { changeFeed: changeFeed as ChangeFeedMode }),
    ...(get('feedMaxLag') === undefined
      ? {}
      : { feedMaxLag: number('feedMaxLag', DEFAULTS.feedMaxLag, 1, 10_000_000) }),
    csvFormulas: csvFormulas as CsvFormulas,
    ...webhookOptions(get),
  };
}

/** `--webhooks` and `--webhook-max-age` (docs/webhooks.md). */
function webhookOptions(get: (name: FlagName) => string | undefined): {
  webhooksFile?: string;
  webhookMaxAgeMs?: number;
} {
  const file = get('webhooks');
  if (file === '') throw new UsageError('--webhooks needs a file name');
  const maxAge = get('webhookMaxAge');
  return {
    ...(file === undefined ? {} : { webhooksFile: path.resolve(file) }),
    ...(maxAge === undefined
      ? {}
      : { webhookMaxAgeMs: parseLifetime('webhookMaxAge', maxAge) * 1000 }),
  };
}
