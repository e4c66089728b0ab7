/**
 * Starts the gateway: uploads directory, MySQL pool, schema, HTTP listener, one start-up line,
 * and a graceful stop on SIGINT/SIGTERM (with --shutdown-delay first a drain: /health 503 while
 * requests are still served; then stop accepting, let in-flight requests finish within a bound,
 * close the pool, exit 0).
 */
import type { FastifyInstance } from 'fastify';
import { Authenticator } from './auth/authenticator.js';
import { KeyFileError, loadKeyFile, type ProviderKeys, RemoteKeys } from './auth/provider-keys.js';
import { ProviderTokens } from './auth/provider-tokens.js';
import { loadJwtSecret, OwnTokens } from './auth/tokens.js';
import { UserStates } from './auth/user-states.js';
import { ensureUsersTable, UserStore } from './auth/users.js';
import { ChangeFeed, LOG_BIN_OFF } from './changes/hub.js';
import { FeedPositions } from './changes/positions.js';
import type { Config } from './config.js';
import { DEFAULTS } from './config.js';
import { reasonOf } from './db/errors.js';
import { hostsLabel } from './db/pool.js';
import { SchemaCache, USERS_TABLE } from './db/schema.js';
import { type Database, openDatabase } from './execute/database.js';
import { trackConnections } from './http/connections.js';
import { SHUTDOWN_GRACE_MS } from './limits.js';
import { createLog, type Log } from './log.js';
import { listenMetrics, type MetricsListener } from './metrics/listener.js';
import { GatewayMetrics } from './metrics/metrics.js';
import { Skiptokens } from './pipeline/skiptoken.js';
import { loadPolicy, type Policy, PolicyError } from './policy/policy.js';
import { buildServer } from './server.js';
import type { AuthServices, ShutdownState } from './services.js';
import { prepareDirectories } from './state-dir.js';
import { RedisCounterStore, redactedUrl } from './throttle/redis-counter-store.js';
import { FileLinks } from './uploads/file-links.js';
import { DiskStorage } from './uploads/storage.js';
import { loadWebhooks, type WebhookDefinition, WebhooksFileError } from './webhooks/definitions.js';
import { Webhooks } from './webhooks/webhooks.js';

/** A reason the gateway cannot start, said in one line (exit code 1). */
export class StartupError extends Error {
  override readonly name = 'StartupError';
  constructor(
    message: string,
    /** 1, or 2 when a file the user gave is wrong (the policy: docs/policies.md). */
    readonly exitCode: 1 | 2 = 1,
  ) {
    super(message);
  }
}

export interface Gateway {
  readonly app: FastifyInstance;
  readonly db: Database;
  readonly schema: SchemaCache;
  readonly log: Log;
  readonly policy: Policy | undefined;
  /** `--redis-url` in auth mode: where login and registration counts are shared. */
  readonly counters: RedisCounterStore | undefined;
  readonly url: string;
  /** `http://<host>:<port>/metrics` with --metrics-port, else null. */
  readonly metricsUrl: string | null;
  readonly skiptokens: Skiptokens;
  /** The change feed (docs/changes.md), on or off with its reason. */
  readonly feed: ChangeFeed;
  /** `--webhooks` (docs/webhooks.md); undefined without. */
  readonly webhooks: Webhooks | undefined;
  close(): Promise<void>;
}

async function connect(config: Config): Promise<Database> {
  try {
    return await openDatabase(config.db, {
      statementTimeoutMs: config.queryTimeoutMs,
      stallTimeoutMs: config.stallTimeoutMs,
      minReadRate: config.minReadRate,
      anonymousTimeoutMs: config.anonymousQueryTimeoutMs ?? config.queryTimeoutMs,
      readConsistency: config.readConsistency,
    });
  } catch (error) {
    throw new StartupError(
      `cannot connect to MySQL at ${hostsLabel(config.db)} as ${config.db.user}: ${reasonOf(error)}`,
    );
  }
}

/** `--jwks-url` or `--jwt-public-key`: the provider's keys (a bad key file is exit 2, as a bad option). */
async function openProviderKeys(config: Config, log: Log): Promise<ProviderKeys | null> {
  const provider = config.identityProvider;
  if (provider === null) return null;
  if (provider.jwksUrl !== null) {
    const keys = new RemoteKeys(new URL(provider.jwksUrl), (reason) =>
      log.warn({ reason }, "cannot fetch the identity provider's keys (--jwks-url)"),
    );
    // Fetched now so the first token need not wait; a provider not up yet is not fatal.
    await keys.refresh();
    return keys;
  }
  try {
    return await loadKeyFile(provider.publicKeyFile as string);
  } catch (error) {
    if (!(error instanceof KeyFileError)) throw error;
    throw new StartupError(`--jwt-public-key ${provider.publicKeyFile}: ${error.message}`, 2);
  }
}

/**
 * Auth mode: the users table (created if missing), the JWT secret, the login dummy hash, the
 * provider's keys, revocation, file links. The policy (checked already) decides which roles a
 * provider's role claim may name.
 */
async function openAuth(
  config: Config,
  db: Database,
  log: Log,
  policy: Policy | undefined,
): Promise<AuthServices> {
  let tokens: OwnTokens;
  try {
    tokens = await OwnTokens.open(config);
  } catch (error) {
    throw new StartupError(`cannot set up authentication: ${reasonOf(error)}`);
  }
  try {
    await ensureUsersTable(db);
  } catch (error) {
    throw new StartupError(`cannot prepare table ${USERS_TABLE}: ${reasonOf(error)}`);
  }
  const users = await UserStore.open(db, config.defaultRole);
  const keys = await openProviderKeys(config, log);
  const provider =
    keys === null || config.identityProvider === null
      ? null
      : new ProviderTokens(keys, {
          issuer: config.identityProvider.issuer,
          audience: config.identityProvider.audience,
          claims: config.identityProvider.claims,
          defaultRole: config.defaultRole,
          definesRole: policy === undefined ? null : (role) => policy.roles.has(role),
        });
  const states = new UserStates((ids) => users.states(ids));
  states.start((error) =>
    log.warn({ reason: reasonOf(error) }, 'cannot refresh the users behind tokens'),
  );
  return {
    users,
    tokens,
    states,
    authenticator: new Authenticator(tokens, provider, states),
    fileLinks: new FileLinks(tokens.secretKey, config.fileUrlTtlSeconds),
  };
}

/** Auth mode with a policy: one warning naming the roles users have that it does not define. */
async function warnOfUndefinedRoles(users: UserStore, policy: Policy, log: Log): Promise<void> {
  const undefinedRoles = [...(await users.roleCounts())].filter(
    ([role]) => !policy.roles.has(role),
  );
  if (undefinedRoles.length === 0) return;
  const list = undefinedRoles
    .map(([role, count]) => `'${role}' (${count} user${count === 1 ? '' : 's'})`)
    .join(', ');
  log.warn(
    { roles: Object.fromEntries(undefinedRoles) },
    `users have roles the policy does not define, so they may do nothing: ${list}; fix them with 'tablegate user set-role'`,
  );
}

/** `--redis-url` in auth mode: the counters every gateway shares; Redis not answering is exit 1. */
async function openCounters(config: Config): Promise<RedisCounterStore | undefined> {
  if (config.mode !== 'auth' || config.redisUrl === null) return undefined;
  try {
    return await RedisCounterStore.open(config.redisUrl, config.db.database);
  } catch (error) {
    throw new StartupError(
      `cannot connect to Redis at ${redactedUrl(config.redisUrl)}: ${reasonOf(error)}`,
    );
  }
}

/**
 * The key of `$skiptoken`s (pipeline/skiptoken.ts). In open mode without `--skiptoken-secret`, a
 * state directory that cannot be written (a read-only file system) costs only this: the key is
 * this process's own, so links do not outlive a restart or work on another gateway, and the
 * gateway says so once.
 */
async function openSkiptokens(config: Config, log: Log): Promise<Skiptokens> {
  try {
    return await Skiptokens.open(config);
  } catch (error) {
    if (config.mode === 'auth' || config.skiptokenSecret !== null) {
      throw new StartupError(`cannot set up $skiptoken links: ${reasonOf(error)}`);
    }
    log.warn(
      { reason: reasonOf(error) },
      `cannot keep a secret in ${config.stateDir}: $skiptoken links work on this gateway until it stops; set --skiptoken-secret to share them`,
    );
    return Skiptokens.ofThisProcess();
  }
}

/**
 * The change feed (docs/changes.md). Its event ids are signed with the secret `$skiptoken`s use,
 * so they work on every gateway of one deployment. `--change-feed on` and a server that cannot
 * serve it: the start fails with the reason.
 */
async function openFeed(
  config: Config,
  db: Database,
  schema: SchemaCache,
  log: Log,
): Promise<ChangeFeed> {
  let secret: string;
  try {
    secret =
      config.skiptokenSecret ??
      (await loadJwtSecret(config.mode === 'auth' ? config.jwtSecret : null, config.stateDir));
  } catch {
    secret = (await import('node:crypto')).randomBytes(32).toString('base64url');
  }
  const feed = await ChangeFeed.open(config, db, schema, new FeedPositions(secret), log);
  if (!feed.status.on && config.changeFeed === 'on') {
    throw new StartupError(`change feed: off (${feed.status.reason})`);
  }
  return feed;
}

/** `--policy`: read and checked against the schema just read; a problem is exit 2. */
async function openPolicy(config: Config, schema: SchemaCache): Promise<Policy | undefined> {
  if (config.policyFile === null) return undefined;
  try {
    const tables = new Map([...schema.all()].map((t) => [t.name, t]));
    return await loadPolicy(config.policyFile, tables, schema.routines);
  } catch (error) {
    if (!(error instanceof PolicyError)) throw error;
    throw new StartupError(`policy ${config.policyFile}: ${error.message}`, 2);
  }
}

/** `--webhooks`: read and checked against the schema and the policy; a mistake is exit 2. */
async function openWebhookFile(
  config: Config,
  schema: SchemaCache,
  policy: Policy | undefined,
  db: Database,
): Promise<WebhookDefinition[] | undefined> {
  const file = config.webhooksFile ?? null;
  if (file === null) return undefined;
  try {
    const tables = new Map([...schema.all()].map((t) => [t.name, t]));
    return await loadWebhooks(file, { tables, policy, flavour: db.flavour });
  } catch (error) {
    if (!(error instanceof WebhooksFileError)) throw error;
    const lines = error.message.split('\n').map((line) => `webhooks ${file}: ${line}`);
    throw new StartupError(lines.join('\n'), 2);
  }
}

/** The webhooks' deliveries, on the change feed: without it there is nothing to deliver. */
async function openWebhooks(
  config: Config,
  definitions: readonly WebhookDefinition[],
  services: { feed: ChangeFeed; db: Database; schema: SchemaCache; log: Log },
  metrics: GatewayMetrics | undefined,
): Promise<Webhooks> {
  const { feed } = services;
  if (!feed.status.on) {
    throw new StartupError(
      `webhooks need the change feed, which is off (${feed.status.reason}): docs/changes.md says what MySQL needs`,
    );
  }
  try {
    return await Webhooks.open({
      ...services,
      definitions,
      maxAgeMs: config.webhookMaxAgeMs ?? DEFAULTS.webhookMaxAgeMs,
      counters: metrics?.webhookCounters() ?? null,
    });
  } catch (error) {
    throw new StartupError(`cannot start the webhooks: ${reasonOf(error)}`);
  }
}

/** `--metrics-port`: its own listener; a port it cannot have stops the start like the API's. */
async function openMetricsListener(
  config: Config,
  metrics: GatewayMetrics,
  app: FastifyInstance,
  db: Database,
): Promise<MetricsListener> {
  const { metricsHost: host, metricsPort: port } = config;
  try {
    return await listenMetrics(metrics.registry, host, port ?? 0);
  } catch (error) {
    await app.close().catch(() => {});
    await db.close().catch(() => {});
    const code = (error as { code?: string }).code;
    if (code === 'EADDRINUSE') {
      throw new StartupError(
        `metrics port ${port} is already in use on ${host}: choose another with --metrics-port`,
      );
    }
    throw new StartupError(`cannot listen for metrics on ${host}:${port}: ${reasonOf(error)}`);
  }
}

/** Starts everything and returns a handle; used by the CLI and by tests. */
export async function openGateway(config: Config): Promise<Gateway> {
  try {
    await prepareDirectories(config);
  } catch (error) {
    throw new StartupError(
      `cannot create uploads directory ${config.uploadsDir}: ${reasonOf(error)}`,
    );
  }
  const db = await connect(config);
  const log = createLog(config.logLevel);
  const schema = new SchemaCache(db, config.db.database, config.schemaRefreshMs);
  let app: FastifyInstance;
  let policy: Policy | undefined;
  const metrics = config.metricsPort === null ? undefined : new GatewayMetrics(db, schema);
  let counters: RedisCounterStore | undefined;
  let auth: AuthServices | undefined;
  let skiptokens: Skiptokens;
  let feed: ChangeFeed | undefined;
  let webhooks: Webhooks | undefined;
  const shutdown: ShutdownState | undefined =
    config.shutdownDelayMs > 0 ? { draining: false } : undefined;
  try {
    counters = await openCounters(config);
    await schema.refresh();
    policy = await openPolicy(config, schema);
    const webhookFile = await openWebhookFile(config, schema, policy, db);
    auth =
      config.mode === 'auth'
        ? { ...(await openAuth(config, db, log, policy)), counters }
        : undefined;
    if (auth !== undefined && policy !== undefined) {
      await warnOfUndefinedRoles(auth.users, policy, log);
    }
    skiptokens = await openSkiptokens(config, log);
    feed = await openFeed(config, db, schema, log);
    if (webhookFile !== undefined) {
      webhooks = await openWebhooks(config, webhookFile, { feed, db, schema, log }, metrics);
    }
    const uploads = new DiskStorage(config.uploadsDir);
    app = await buildServer({
      config,
      db,
      schema,
      log,
      uploads,
      skiptokens,
      auth,
      policy,
      metrics,
      shutdown,
      feed,
    });
    await app.ready();
  } catch (error) {
    await webhooks?.close();
    await feed?.close();
    auth?.states.stop();
    await counters?.close();
    await db.close().catch(() => {});
    if (error instanceof StartupError) throw error;
    throw new StartupError(`cannot start: ${reasonOf(error)}`);
  }
  const changeFeed = feed;
  const connections = trackConnections(app.server);
  try {
    await app.listen({ port: config.listenPort, host: config.listenHost });
  } catch (error) {
    await webhooks?.close();
    await changeFeed.close();
    await app.close().catch(() => {});
    auth?.states.stop();
    await counters?.close();
    await db.close().catch(() => {});
    const code = (error as { code?: string }).code;
    if (code === 'EADDRINUSE') {
      throw new StartupError(
        `port ${config.listenPort} is already in use on ${config.listenHost}: choose another with -o <port>`,
      );
    }
    throw new StartupError(
      `cannot listen on ${config.listenHost}:${config.listenPort}: ${reasonOf(error)}`,
    );
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.listenPort;
  const shownHost =
    config.listenHost === '0.0.0.0' || config.listenHost === '::' ? 'localhost' : config.listenHost;
  const url = `http://${shownHost}:${port}`;
  const metricsListener =
    metrics &&
    (await openMetricsListener(config, metrics, app, db).catch(async (error: unknown) => {
      auth?.states.stop();
      await counters?.close();
      throw error;
    }));
  if (config.readConsistency !== 'eventual' && db.cluster === 'single') {
    log.info(
      `read consistency ${config.readConsistency}: MySQL is a single server (no Galera, no Group Replication), whose reads always see every earlier write; nothing to set`,
    );
  }
  db.events = {
    switched: (from, to) =>
      log.warn({ from, to }, `MySQL host ${from} is not answering; now using ${to}`),
  };
  if (counters) {
    counters.events = {
      unavailable: (reason) =>
        log.warn({ reason }, 'Redis does not answer: login limits count in this gateway only'),
      restored: () => log.warn('Redis answers again: login limits count across gateways'),
    };
  }
  let closing: Promise<void> | null = null;
  return {
    app,
    db,
    schema,
    log,
    policy,
    counters,
    url,
    metricsUrl: metricsListener?.url ?? null,
    skiptokens,
    feed: changeFeed,
    webhooks,
    close: () => {
      closing ??= (async () => {
        if (shutdown) {
          // Readiness off, everything else served: the load balancer's next health check takes
          // this gateway out before it stops accepting (a rolling restart loses no request).
          shutdown.draining = true;
          await new Promise((resolve) => setTimeout(resolve, config.shutdownDelayMs));
        }
        const timer = setTimeout(() => app.server.closeAllConnections(), SHUTDOWN_GRACE_MS);
        // Webhooks let their leases go, streams end (they would hold the close for its whole
        // grace), then the binary log's connection.
        await webhooks?.close();
        await changeFeed.close();
        connections.closeUnused();
        try {
          await Promise.all([app.close(), metricsListener?.close()]);
        } finally {
          clearTimeout(timer);
          auth?.states.stop();
          await counters?.close();
          await db.close().catch(() => {});
        }
      })();
      return closing;
    },
  };
}

/** The CLI's entry: start, print the start-up line, stop cleanly on a signal. */
export async function startGateway(config: Config): Promise<void> {
  const gateway = await openGateway(config);
  const { tables, views } = gateway.schema.counts;
  const served =
    `${tables} table${tables === 1 ? '' : 's'}` +
    (views === 0 ? '' : ` and ${views} view${views === 1 ? '' : 's'}`);
  process.stdout.write(
    `tablegate listening on ${gateway.url} (mode: ${config.mode}, database: ${config.db.database}, ` +
      `${served}, uploads: ${config.uploadsDir}, ` +
      `${config.mode === 'auth' ? `registration: ${config.registration}, ` : ''}` +
      `policy: ${config.policyFile ?? 'none'}, read consistency: ${config.readConsistency})\n`,
  );
  // A second line when the feed is on, or off for a reason worth fixing; a server without a
  // binary log at all (or --change-feed off) keeps the one line (docs/configuration.md).
  const { status } = gateway.feed;
  if (status.on) process.stdout.write('change feed: on\n');
  else if (status.reason !== LOG_BIN_OFF && config.changeFeed !== 'off') {
    process.stdout.write(`change feed: off (${status.reason})\n`);
  }
  // --cache given, but nothing would drop its answers: served without it, and said so.
  if (!status.on && (config.cacheMiB ?? 0) > 0) {
    process.stdout.write('cache: off (it needs the change feed, which is off)\n');
  }
  const stop = (signal: string) => {
    gateway.log.info({ signal }, 'shutting down');
    gateway.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGINT', () => stop('SIGINT'));
  process.once('SIGTERM', () => stop('SIGTERM'));
}
