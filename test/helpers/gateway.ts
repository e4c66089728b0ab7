/**
 * Starts the real gateway on a free port against a test database, with its own temporary
 * uploads and state directories, and gives back its URL.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type mysql from 'mysql2/promise';
import { type Config, DEFAULTS } from '../../src/config.js';
import { USERS_TABLE } from '../../src/db/schema.js';
import { type Gateway, openGateway } from '../../src/main.js';
import { testServer } from './mysql-url.js';

export interface TestGateway {
  readonly url: string;
  readonly gateway: Gateway;
  readonly config: Config;
  close(): Promise<void>;
}

export async function startTestGateway(
  database: string,
  overrides: Partial<Config> = {},
): Promise<TestGateway> {
  const server = testServer();
  const stateDir = await mkdtemp(path.join(os.tmpdir(), 'tablegate-state-'));
  const config: Config = {
    mode: 'open',
    db: { ...server, database, poolSize: 4 },
    listenPort: 0,
    listenHost: '127.0.0.1',
    baseUrl: null,
    jwtSecret: null,
    tokenTtlSeconds: DEFAULTS.tokenTtlSeconds,
    stateDir,
    uploadsDir: path.join(stateDir, 'uploads'),
    maxFileSize: DEFAULTS.maxFileSize,
    maxFiles: DEFAULTS.maxFiles,
    bodyLimit: DEFAULTS.bodyLimit,
    corsOrigin: DEFAULTS.corsOrigin,
    logLevel: 'silent',
    queryTimeoutMs: DEFAULTS.queryTimeoutMs,
    stallTimeoutMs: DEFAULTS.stallTimeoutMs,
    // Tests change the schema under a running gateway and expect the next request to see it.
    schemaRefreshMs: 0,
    registration: 'open',
    defaultRole: DEFAULTS.defaultRole,
    policyFile: null,
    trustProxy: DEFAULTS.trustProxy,
    // As by default: no cap (one test process plays many clients from one address); the tests
    // of the cap set it.
    maxClientRequests: 0,
    anonymousQueryTimeoutMs: null,
    minReadRate: DEFAULTS.minReadRate,
    maxAnswerBytes: DEFAULTS.maxAnswerBytes,
    mcpMaxRows: DEFAULTS.mcpMaxRows,
    odataMaxPage: DEFAULTS.odataMaxPage,
    bodyTimeoutMs: DEFAULTS.bodyTimeoutMs,
    maxConnections: DEFAULTS.maxConnections,
    metricsPort: null,
    metricsHost: DEFAULTS.metricsHost,
    redisUrl: null,
    shutdownDelayMs: DEFAULTS.shutdownDelayMs,
    readConsistency: DEFAULTS.readConsistency,
    skiptokenSecret: null,
    identityProvider: null,
    fileUrlTtlSeconds: DEFAULTS.fileUrlTtlSeconds,
    csvFormulas: DEFAULTS.csvFormulas,
    ...overrides,
  };
  let gateway: Gateway;
  try {
    gateway = await openGateway(config);
  } catch (error) {
    // A gateway that did not start has no close(): its state directory goes now.
    await rm(stateDir, { recursive: true, force: true });
    throw error;
  }
  return {
    url: gateway.url,
    gateway,
    config,
    close: async () => {
      await gateway.close();
      await rm(stateDir, { recursive: true, force: true });
    },
  };
}

/** POSTs `{email, password}` as JSON (register or login) and gives back what came back. */
export async function postCredentials(url: string, path: string, email: string, password: string) {
  const response = await fetch(url + path, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ email, password }),
  });
  return { status: response.status, headers: response.headers, body: await response.json() };
}

/**
 * A user made as a deployment makes one: registered over HTTP, given `role` in the users table
 * (as an operator would), then logged in. Its token and its id (as `@user.id` sees it, a string).
 */
export async function signUpAs(
  url: string,
  admin: mysql.Connection,
  credentials: { email: string; password: string },
  role: string,
): Promise<{ token: string; id: string }> {
  const { email, password } = credentials;
  const registered = await postCredentials(url, '/auth/register', email, password);
  if (registered.status !== 200) {
    throw new Error(`register ${email}: ${registered.status} ${JSON.stringify(registered.body)}`);
  }
  await admin.query(`UPDATE ${USERS_TABLE} SET role = ? WHERE email = ?`, [role, email]);
  const login = await postCredentials(url, '/auth/login', email, password);
  const [rows] = await admin.query<mysql.RowDataPacket[]>(
    `SELECT id FROM ${USERS_TABLE} WHERE email = ?`,
    [email],
  );
  return { token: (login.body as { token: string }).token, id: String(rows[0]?.id) };
}
