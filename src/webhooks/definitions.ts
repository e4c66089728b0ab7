/**
 * The webhooks file (`--webhooks`, docs/webhooks.md): a JSON list of `{name, table, filter?,
 * select?, role?, url, secret | secretFile, events?}`, read and checked at start as the policy
 * file is. Every mistake is one line (a start with any is exit 2): an unknown table, a `filter`
 * or `select` the table's read would refuse (unknown column, hidden column, bad syntax), a role
 * the policy does not define or that may not read the table, a bad URL, a secret that is not the
 * Standard Webhooks `whsec_<base64>` form.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { compileSubscription, type SubscriptionOptions } from '../changes/subscription.js';
import type { TableInfo } from '../db/schema-types.js';
import type { Flavour } from '../execute/database.js';
import { compileRead } from '../pipeline/read.js';
import type { Policy } from '../policy/policy.js';
import type { Access } from '../policy/views.js';

export type WebhookEvent = 'insert' | 'update' | 'delete';

export interface WebhookDefinition {
  readonly name: string;
  readonly table: string;
  /** The `$select` and `$filter` of the change feed's subscription it delivers. */
  readonly options: SubscriptionOptions;
  /** Whose view decides what is sent; null without a policy (every row, every column). */
  readonly access: Access | null;
  readonly url: string;
  /** `whsec_<base64>`: what the Standard Webhooks signature is made with. */
  readonly secret: string;
  readonly events: ReadonlySet<WebhookEvent>;
}

/** One line per mistake in the file. */
export class WebhooksFileError extends Error {
  override readonly name = 'WebhooksFileError';
}

const FIELDS = new Set([
  'name',
  'table',
  'filter',
  'select',
  'role',
  'url',
  'secret',
  'secretFile',
  'events',
]);
const EVENTS: readonly WebhookEvent[] = ['insert', 'update', 'delete'];
const NAME = /^[A-Za-z0-9_.-]{1,100}$/;
/** Standard Webhooks: a key of 24 to 64 bytes, base64 after `whsec_`. */
const SECRET = /^whsec_([A-Za-z0-9+/]+={0,2})$/;

export interface WebhookSchema {
  readonly tables: ReadonlyMap<string, TableInfo>;
  readonly policy: Policy | undefined;
  readonly flavour: Flavour;
}

/** Reads and checks the file; WebhooksFileError with every mistake, one a line. */
export async function loadWebhooks(
  file: string,
  schema: WebhookSchema,
): Promise<WebhookDefinition[]> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new WebhooksFileError(
      `cannot read it: ${(error as { code?: string }).code ?? String(error)}`,
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new WebhooksFileError(`not JSON: ${(error as Error).message}`);
  }
  return checkWebhooks(parsed, schema, path.dirname(file));
}

/** The definitions of a parsed file; `dir` is where a relative `secretFile` is read from. */
export async function checkWebhooks(
  parsed: unknown,
  schema: WebhookSchema,
  dir: string,
): Promise<WebhookDefinition[]> {
  if (!Array.isArray(parsed)) {
    throw new WebhooksFileError('must be a JSON list of webhooks ([{"name": …}, …])');
  }
  const mistakes: string[] = [];
  const definitions: WebhookDefinition[] = [];
  const names = new Set<string>();
  for (const [index, entry] of parsed.entries()) {
    const label =
      typeof entry === 'object' && entry !== null && typeof entry.name === 'string'
        ? `webhook '${entry.name}'`
        : `webhook ${index + 1}`;
    const problems: string[] = [];
    const definition = await checkOne(entry, schema, dir, problems);
    if (definition !== null && names.has(definition.name)) {
      problems.push(`the name '${definition.name}' is used twice`);
    }
    if (problems.length > 0 || definition === null) {
      for (const problem of problems) mistakes.push(`${label}: ${problem}`);
      continue;
    }
    names.add(definition.name);
    definitions.push(definition);
  }
  if (mistakes.length > 0) throw new WebhooksFileError(mistakes.join('\n'));
  return definitions;
}

async function checkOne(
  entry: unknown,
  schema: WebhookSchema,
  dir: string,
  problems: string[],
): Promise<WebhookDefinition | null> {
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
    problems.push('must be an object');
    return null;
  }
  const fields = entry as Record<string, unknown>;
  for (const field of Object.keys(fields)) {
    if (!FIELDS.has(field)) {
      problems.push(`unknown field '${field}' (a webhook takes ${[...FIELDS].join(', ')})`);
    }
  }
  const text = (field: string, required: boolean): string | null => {
    const value = fields[field];
    if (value === undefined) {
      if (required) problems.push(`'${field}' is missing`);
      return null;
    }
    if (typeof value !== 'string' || value === '') {
      problems.push(`'${field}' must be a non-empty string`);
      return null;
    }
    return value;
  };
  const name = text('name', true);
  if (name !== null && !NAME.test(name)) {
    problems.push(
      `the name '${name}' may hold only letters, digits, '_', '.' and '-' (100 at most)`,
    );
  }
  const url = checkUrl(text('url', true), problems);
  const secret = await checkSecret(fields, dir, problems);
  const events = checkEvents(fields.events, problems);
  const access = checkRole(text('role', false), schema.policy, problems);
  const tableName = text('table', true);
  const filter = text('filter', false);
  const select = text('select', false);
  let table: TableInfo | undefined;
  if (tableName !== null) {
    table = schema.tables.get(tableName);
    if (table === undefined) problems.push(`table '${tableName}' does not exist`);
  }
  const options: SubscriptionOptions = {
    ...(select === null ? {} : { $select: select }),
    ...(filter === null ? {} : { $filter: filter }),
  };
  if (table !== undefined && access !== undefined) {
    checkReads(table, options, access, schema.flavour, problems);
  }
  if (problems.length > 0 || name === null || url === null || secret === null) return null;
  if (table === undefined || access === undefined || events === null) return null;
  return { name, table: table.name, options, access, url, secret, events };
}

function checkUrl(url: string | null, problems: string[]): string | null {
  if (url === null) return null;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    problems.push(`'url' is not a URL: '${url}'`);
    return null;
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    problems.push(`'url' must be http:// or https://, got '${url}'`);
    return null;
  }
  return parsed.href;
}

async function checkSecret(
  fields: Record<string, unknown>,
  dir: string,
  problems: string[],
): Promise<string | null> {
  const { secret, secretFile } = fields;
  if ((secret === undefined) === (secretFile === undefined)) {
    problems.push("give one of 'secret' and 'secretFile'");
    return null;
  }
  let value: string;
  if (secret !== undefined) {
    if (typeof secret !== 'string') {
      problems.push("'secret' must be a string");
      return null;
    }
    value = secret;
  } else {
    if (typeof secretFile !== 'string' || secretFile === '') {
      problems.push("'secretFile' must be a file name");
      return null;
    }
    try {
      value = (await readFile(path.resolve(dir, secretFile), 'utf8')).trim();
    } catch (error) {
      problems.push(
        `cannot read secretFile '${secretFile}': ${(error as { code?: string }).code ?? String(error)}`,
      );
      return null;
    }
  }
  const match = SECRET.exec(value);
  const bytes = match === null ? 0 : Buffer.from(match[1] as string, 'base64').length;
  if (bytes < 24 || bytes > 64) {
    problems.push(
      'the secret must be whsec_ and 24 to 64 bytes in base64 (Standard Webhooks), e.g. whsec_$(openssl rand -base64 32)',
    );
    return null;
  }
  return value;
}

function checkEvents(events: unknown, problems: string[]): ReadonlySet<WebhookEvent> | null {
  if (events === undefined) return new Set(EVENTS);
  if (
    !Array.isArray(events) ||
    events.length === 0 ||
    events.some((event) => !EVENTS.includes(event as WebhookEvent))
  ) {
    problems.push(`'events' must be a non-empty list of ${EVENTS.join(', ')}`);
    return null;
  }
  return new Set(events as WebhookEvent[]);
}

/** The access the role's view is decided by; undefined when the role cannot be used. */
function checkRole(
  role: string | null,
  policy: Policy | undefined,
  problems: string[],
): Access | null | undefined {
  if (policy === undefined) {
    if (role === null) return null;
    problems.push(`'role' needs a policy (--policy) that defines role '${role}'`);
    return undefined;
  }
  if (role === null) {
    problems.push("'role' is missing: with a policy, a role's view decides what a webhook sends");
    return undefined;
  }
  if (!policy.roles.has(role)) {
    problems.push(`the policy does not define role '${role}'`);
    return undefined;
  }
  return { policy, role, user: null };
}

function checkReads(
  table: TableInfo,
  options: SubscriptionOptions,
  access: Access | null,
  flavour: Flavour,
  problems: string[],
): void {
  if (access !== null) {
    const decision = access.policy.decide(access.role, {
      kind: 'table',
      table: table.name,
      action: 'read',
    });
    if (!decision.allowed) {
      problems.push(`role '${access.role}' may not read table '${table.name}'`);
      return;
    }
  }
  if (compileRead(table, {}, access, flavour).namesUser) {
    problems.push(
      `role '${access?.role}' reads '${table.name}' by @user values, and a webhook has no user: give it a role whose read does not name @user`,
    );
    return;
  }
  const attempt = (part: SubscriptionOptions, what: string): boolean => {
    try {
      compileSubscription(table, part, access, flavour);
      return true;
    } catch (error) {
      const { code, message } = error as { code?: string; message?: string };
      problems.push(`its ${what} does not fit table '${table.name}': ${message ?? code}`);
      return false;
    }
  };
  const fits =
    (options.$filter === undefined || attempt({ $filter: options.$filter }, 'filter')) &&
    (options.$select === undefined || attempt({ $select: options.$select }, 'select'));
  if (fits) attempt(options, 'filter and select');
}
