/**
 * `--policy <file>` (CONTRACT §6): per role, per table (`*` for all), the actions read, create,
 * update and delete as true/false/{where, columns}, and files.upload/files.download. Loaded from
 * JSON or YAML and checked against the live schema at start (validatePolicy is pure given the
 * tables); every problem is a PolicyError naming it in one line. With a policy, what is not
 * granted is denied.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { USERS_TABLE } from '../db/schema.js';
import type { TableInfo } from '../db/schema-types.js';
import { parseWhere, WhereCondition } from './where.js';

export const ACTIONS = ['read', 'create', 'update', 'delete'] as const;
export type Action = (typeof ACTIONS)[number];
export const FILE_ACTIONS = ['upload', 'download'] as const;
export type FileAction = (typeof FILE_ACTIONS)[number];

/** The role of a request without a token, and of every request in open mode. */
export const ANONYMOUS = 'anonymous';
export const ALL_TABLES = '*';

/** A granted action: every row and column unless `where`/`columns` narrow it. */
export interface Grant {
  readonly where: WhereCondition | null;
  /** Column names in the order given; null for all. */
  readonly columns: readonly string[] | null;
}

/** An action as a table entry names it: granted, or named and denied (`false`). */
type ActionEntry = Grant | false;
type TableEntry = Partial<Record<Action, ActionEntry>>;

export interface RolePolicy {
  readonly tables: ReadonlyMap<string, TableEntry>;
  readonly files: Readonly<Record<FileAction, boolean>>;
}

/** What a request asks to do, by the route Fastify chose (never the raw URL). */
export type Requested =
  | { readonly kind: 'table'; readonly table: string; readonly action: Action }
  | { readonly kind: 'files'; readonly action: FileAction }
  | { readonly kind: 'description' }
  /** The MCP endpoint: its tools check each table as REST does (mcp/run-tool.ts). */
  | { readonly kind: 'mcp' }
  | { readonly kind: 'other' };

/**
 * The answer to a request: allowed (with the action's grant for a table), or refused as a
 * table the role cannot read (answered as if it did not exist) or as a forbidden action.
 */
export type Decision =
  | { readonly allowed: true; readonly grant: Grant | null }
  | { readonly allowed: false; readonly refusal: 'unknown-table' | 'forbidden' };

const FORBIDDEN: Decision = { allowed: false, refusal: 'forbidden' };
const UNKNOWN_TABLE: Decision = { allowed: false, refusal: 'unknown-table' };
const ALLOWED: Decision = { allowed: true, grant: null };

export class PolicyError extends Error {
  override readonly name = 'PolicyError';
}

export class Policy {
  constructor(
    /** As given, for the start-up line. */
    readonly file: string,
    readonly roles: ReadonlyMap<string, RolePolicy>,
  ) {}

  /**
   * What the role may do with the table: the table's own entry for the actions it names, else
   * `*`'s. The users table never, whatever the file says.
   */
  grant(role: string, table: string, action: Action): Grant | null {
    if (table === USERS_TABLE) return null;
    const tables = this.roles.get(role)?.tables;
    if (tables === undefined) return null;
    const own = tables.get(table)?.[action];
    const entry = own !== undefined ? own : tables.get(ALL_TABLES)?.[action];
    return entry === undefined || entry === false ? null : entry;
  }

  /**
   * The one rule of who may do what: a table action needs the table readable (else the table
   * is unknown to the role) and the action granted (else forbidden); files need their grant;
   * the API description needs some grant; nothing else is ever allowed by a policy.
   */
  decide(role: string, requested: Requested): Decision {
    switch (requested.kind) {
      case 'table': {
        const read = this.grant(role, requested.table, 'read');
        if (read === null) return UNKNOWN_TABLE;
        const grant =
          requested.action === 'read' ? read : this.grant(role, requested.table, requested.action);
        return grant === null ? FORBIDDEN : { allowed: true, grant };
      }
      case 'files':
        return this.mayFiles(role, requested.action) ? ALLOWED : FORBIDDEN;
      case 'description':
      case 'mcp':
        return this.grantsAnything(role) ? ALLOWED : FORBIDDEN;
      case 'other':
        return FORBIDDEN;
    }
  }

  mayFiles(role: string, action: FileAction): boolean {
    return this.roles.get(role)?.files[action] ?? false;
  }

  /** Whether the role is granted anything at all (an API description is worth showing it). */
  grantsAnything(role: string): boolean {
    const policy = this.roles.get(role);
    if (policy === undefined) return false;
    if (policy.files.upload || policy.files.download) return true;
    for (const entry of policy.tables.values()) {
      if (ACTIONS.some((action) => entry[action])) return true;
    }
    return false;
  }
}

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function only(value: Json, allowed: readonly string[], where: string, what: string): void {
  for (const key of Object.keys(value)) {
    if (!allowed.includes(key)) {
      throw new PolicyError(
        `${where}: unknown ${what} '${key}' (expected ${allowed.map((k) => `'${k}'`).join(', ')})`,
      );
    }
  }
}

function objectAt(value: unknown, where: string): Json {
  if (!isObject(value)) throw new PolicyError(`${where} must be an object`);
  return value;
}

/** A JSON path for messages: roles.user.tables.orders.read.where */
const at = (...parts: string[]) => parts.join('.');

function validateGrant(
  value: unknown,
  action: Action,
  role: string,
  tables: readonly TableInfo[],
  where: string,
): ActionEntry {
  if (value === true) return { where: null, columns: null };
  if (value === false) return false;
  if (!isObject(value)) {
    throw new PolicyError(
      `${where} must be true, false or an object with 'where' and/or 'columns'`,
    );
  }
  only(value, ['where', 'columns'], where, 'key');
  let columns: string[] | null = null;
  if (value.columns !== undefined) {
    if (action === 'delete') {
      throw new PolicyError(
        `${at(where, 'columns')}: delete takes no columns (it removes whole rows)`,
      );
    }
    if (!Array.isArray(value.columns) || !value.columns.every((c) => typeof c === 'string')) {
      throw new PolicyError(`${at(where, 'columns')} must be a list of column names`);
    }
    columns = [...new Set(value.columns as string[])];
    for (const table of tables) {
      for (const name of columns) {
        if (!table.columnsByName.has(name)) {
          throw new PolicyError(
            `${at(where, 'columns')}: column '${name}' does not exist in table '${table.name}'`,
          );
        }
      }
    }
  }
  let condition: WhereCondition | null = null;
  if (value.where !== undefined) {
    const whereAt = at(where, 'where');
    if (typeof value.where !== 'string') throw new PolicyError(`${whereAt} must be a string`);
    try {
      condition = new WhereCondition(parseWhere(value.where));
    } catch (error) {
      throw new PolicyError(`${whereAt}: ${(error as Error).message}`);
    }
    if (role === ANONYMOUS && condition.template.usesUser) {
      throw new PolicyError(
        `${whereAt}: '${ANONYMOUS}' has no user, so its where cannot use @user.id, @user.email or @user.role`,
      );
    }
    for (const table of tables) {
      try {
        condition.planOn(table);
      } catch (error) {
        throw new PolicyError(`${whereAt}: ${(error as Error).message}`);
      }
    }
  }
  return { where: condition, columns };
}

function validateRole(
  role: string,
  value: unknown,
  schema: ReadonlyMap<string, TableInfo>,
): RolePolicy {
  const where = at('roles', role);
  const body = objectAt(value, where);
  only(body, ['tables', 'files'], where, 'role key');
  const tables = new Map<string, TableEntry>();
  if (body.tables !== undefined) {
    for (const [name, entryValue] of Object.entries(objectAt(body.tables, at(where, 'tables')))) {
      const entryAt = at(where, 'tables', name);
      const targets =
        name === ALL_TABLES
          ? [...schema.values()]
          : [schema.get(name)].filter((t) => t !== undefined);
      if (targets.length === 0 && name !== ALL_TABLES) {
        throw new PolicyError(`${entryAt}: table '${name}' does not exist`);
      }
      const entryBody = objectAt(entryValue, entryAt);
      only(entryBody, ACTIONS, entryAt, 'action');
      const entry: TableEntry = {};
      for (const action of ACTIONS) {
        if (entryBody[action] === undefined) continue;
        entry[action] = validateGrant(
          entryBody[action],
          action,
          role,
          targets,
          at(entryAt, action),
        );
      }
      tables.set(name, entry);
    }
  }
  const files = { upload: false, download: false };
  if (body.files !== undefined) {
    const filesBody = objectAt(body.files, at(where, 'files'));
    only(filesBody, FILE_ACTIONS, at(where, 'files'), 'action');
    for (const action of FILE_ACTIONS) {
      const granted = filesBody[action];
      if (granted === undefined) continue;
      if (typeof granted !== 'boolean') {
        throw new PolicyError(`${at(where, 'files', action)} must be true or false`);
      }
      files[action] = granted;
    }
  }
  return { tables, files };
}

/** Checks a parsed policy document against the tables of the live schema. Pure. */
export function validatePolicy(
  document: unknown,
  schema: ReadonlyMap<string, TableInfo>,
  file = 'policy',
): Policy {
  const top = objectAt(document, 'the policy');
  only(top, ['roles'], 'the policy', 'key');
  const roles = new Map<string, RolePolicy>();
  for (const [role, value] of Object.entries(objectAt(top.roles, 'roles'))) {
    if (role === '' || role.length > 64) {
      throw new PolicyError(`roles: a role name is 1 to 64 characters long, got '${role}'`);
    }
    roles.set(role, validateRole(role, value, schema));
  }
  return new Policy(file, roles);
}

/** The file's text as a document: YAML for `.yaml`/`.yml`, JSON otherwise. */
export function parsePolicyText(text: string, file: string): unknown {
  const yaml = /\.ya?ml$/i.test(file);
  try {
    return yaml ? parseYaml(text) : JSON.parse(text);
  } catch (error) {
    const reason = (error as Error).message.split('\n')[0];
    throw new PolicyError(`not valid ${yaml ? 'YAML' : 'JSON'}: ${reason}`);
  }
}

/** Reads, parses and checks the policy file; every failure is one PolicyError line. */
export async function loadPolicy(
  file: string,
  schema: ReadonlyMap<string, TableInfo>,
): Promise<Policy> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new PolicyError(`cannot read it: ${(error as { code?: string }).code ?? String(error)}`);
  }
  return validatePolicy(parsePolicyText(text, file), schema, path.basename(file));
}
