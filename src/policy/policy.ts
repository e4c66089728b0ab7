/**
 * `--policy <file>` (docs/policies.md): per role, per table (`*` for all), the actions read,
 * create, update and delete as true/false/{where, columns}, files.upload/files.download, and per
 * stored routine (`*` for all) true/false (docs/routines.md). Loaded from JSON or YAML and checked
 * against the live schema at start (validatePolicy is pure given the tables and routines); every
 * problem is a PolicyError naming it in one line. With a policy, what is not granted is denied.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { didYouMean } from '../cli/did-you-mean.js';
import { NO_ROUTINES, type Routines } from '../db/routines.js';
import { OWN_TABLES } from '../db/schema.js';
import type { TableInfo } from '../db/schema-types.js';
import { parseWhere, WhereCondition } from './where.js';

export const ACTIONS = ['read', 'create', 'update', 'delete'] as const;
export type Action = (typeof ACTIONS)[number];
export const FILE_ACTIONS = ['upload', 'download'] as const;
export type FileAction = (typeof FILE_ACTIONS)[number];

/** The role of a request without a token, and of every request in open mode. */
export const ANONYMOUS = 'anonymous';
export const ALL_TABLES = '*';
/** In a role's `routines`: every stored procedure and function. */
export const ALL_ROUTINES = '*';

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
  /** Routine name (or `*`) → granted; a named routine overrides `*`. */
  readonly routines: ReadonlyMap<string, boolean>;
}

/** What a request asks to do, by the route Fastify chose (never the raw URL). */
export type Requested =
  | { readonly kind: 'table'; readonly table: string; readonly action: Action }
  | { readonly kind: 'files'; readonly action: FileAction }
  /** `/rpc/<name>`: calling the procedure or function of that name. */
  | { readonly kind: 'routine'; readonly routine: string }
  | { readonly kind: 'description' }
  /** The MCP endpoint: its tools check each table as REST does (pipeline/decide.ts). */
  | { readonly kind: 'mcp' }
  /** The OData service under /odata/: each request checks its table or routine as REST does. */
  | { readonly kind: 'odata' }
  | { readonly kind: 'other' };

/**
 * The answer to a request: allowed (with the action's grant for a table), or refused as a
 * table or routine the role cannot use (answered as if it did not exist) or as a forbidden action.
 */
export type Decision =
  | { readonly allowed: true; readonly grant: Grant | null }
  | {
      readonly allowed: false;
      readonly refusal: 'unknown-table' | 'unknown-routine' | 'forbidden';
    };

const FORBIDDEN: Decision = { allowed: false, refusal: 'forbidden' };
const UNKNOWN_TABLE: Decision = { allowed: false, refusal: 'unknown-table' };
const UNKNOWN_ROUTINE: Decision = { allowed: false, refusal: 'unknown-routine' };
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
   * `*`'s. The gateway's own tables (users, webhooks) never, whatever the file says.
   */
  grant(role: string, table: string, action: Action): Grant | null {
    if (OWN_TABLES.has(table)) return null;
    const tables = this.roles.get(role)?.tables;
    if (tables === undefined) return null;
    const own = tables.get(table)?.[action];
    const entry = own !== undefined ? own : tables.get(ALL_TABLES)?.[action];
    return entry === undefined || entry === false ? null : entry;
  }

  /**
   * The one rule of who may do what: a table action needs the table readable (else the table
   * is unknown to the role) and the action granted (else forbidden); files need their grant; a
   * routine its grant (else it is unknown to the role); the API description needs some grant;
   * nothing else is ever allowed by a policy.
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
      case 'routine':
        return this.mayCall(role, requested.routine) ? ALLOWED : UNKNOWN_ROUTINE;
      case 'description':
      case 'mcp':
      case 'odata':
        return this.grantsAnything(role) ? ALLOWED : FORBIDDEN;
      case 'other':
        return FORBIDDEN;
    }
  }

  mayFiles(role: string, action: FileAction): boolean {
    return this.roles.get(role)?.files[action] ?? false;
  }

  /** The routine's own entry, else `*`'s; absent from both: not granted. */
  private mayCall(role: string, routine: string): boolean {
    const routines = this.roles.get(role)?.routines;
    if (routines === undefined) return false;
    return routines.get(routine) ?? routines.get(ALL_ROUTINES) ?? false;
  }

  /** Whether `role` may read a table: what a 404's "did you mean" may name (made only for a 404). */
  readableBy(role: string): (table: TableInfo) => boolean {
    return (table) =>
      this.decide(role, { kind: 'table', table: table.name, action: 'read' }).allowed;
  }

  /** Whether `role` may call a routine: what a 404's "did you mean" may name (made only for a 404). */
  callableBy(role: string): (routine: string) => boolean {
    return (routine) => this.mayCall(role, routine);
  }

  /** Whether the role is granted anything at all (an API description is worth showing it). */
  grantsAnything(role: string): boolean {
    const policy = this.roles.get(role);
    if (policy === undefined) return false;
    if (policy.files.upload || policy.files.download) return true;
    for (const granted of policy.routines.values()) if (granted) return true;
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
          const known = table.columns.map((column) => column.name);
          throw new PolicyError(
            `${at(where, 'columns')}: column '${name}' does not exist in table '${table.name}'${didYouMean(name, known)}`,
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

/** A role's `routines`: `*` or the name of a served procedure or function, each true or false. */
function validateRoutines(value: unknown, where: string, routines: Routines): Map<string, boolean> {
  const granted = new Map<string, boolean>();
  for (const [name, entry] of Object.entries(objectAt(value, where))) {
    const entryAt = at(where, name);
    const known =
      name === ALL_ROUTINES || routines.procedures.has(name) || routines.functions.has(name);
    if (!known) {
      const names = [...routines.procedures.keys(), ...routines.functions.keys()];
      throw new PolicyError(
        `${entryAt}: routine '${name}' does not exist${didYouMean(name, names)}`,
      );
    }
    if (typeof entry !== 'boolean') throw new PolicyError(`${entryAt} must be true or false`);
    granted.set(name, entry);
  }
  return granted;
}

function validateRole(
  role: string,
  value: unknown,
  schema: ReadonlyMap<string, TableInfo>,
  routines: Routines,
): RolePolicy {
  const where = at('roles', role);
  const body = objectAt(value, where);
  only(body, ['tables', 'files', 'routines'], where, 'role key');
  const tables = new Map<string, TableEntry>();
  if (body.tables !== undefined) {
    for (const [name, entryValue] of Object.entries(objectAt(body.tables, at(where, 'tables')))) {
      const entryAt = at(where, 'tables', name);
      const targets =
        name === ALL_TABLES
          ? [...schema.values()]
          : [schema.get(name)].filter((t) => t !== undefined);
      if (targets.length === 0 && name !== ALL_TABLES) {
        throw new PolicyError(
          `${entryAt}: table '${name}' does not exist${didYouMean(name, [...schema.keys()])}`,
        );
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
  const granted =
    body.routines === undefined
      ? new Map<string, boolean>()
      : validateRoutines(body.routines, at(where, 'routines'), routines);
  return { tables, files, routines: granted };
}

/** Checks a parsed policy document against the tables and routines of the live schema. Pure. */
export function validatePolicy(
  document: unknown,
  schema: ReadonlyMap<string, TableInfo>,
  file = 'policy',
  routines: Routines = NO_ROUTINES,
): Policy {
  const top = objectAt(document, 'the policy');
  only(top, ['roles'], 'the policy', 'key');
  const roles = new Map<string, RolePolicy>();
  for (const [role, value] of Object.entries(objectAt(top.roles, 'roles'))) {
    if (role === '' || role.length > 64) {
      throw new PolicyError(`roles: a role name is 1 to 64 characters long, got '${role}'`);
    }
    roles.set(role, validateRole(role, value, schema, routines));
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
  routines: Routines = NO_ROUTINES,
): Promise<Policy> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new PolicyError(`cannot read it: ${(error as { code?: string }).code ?? String(error)}`);
  }
  return validatePolicy(parsePolicyText(text, file), schema, path.basename(file), routines);
}
