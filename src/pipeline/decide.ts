/**
 * The table or routine a request names, for the caller's role (docs/policies.md): what every
 * front door asks before anything else, decided here once (Policy.decide says what is allowed).
 * A table the role may not read answers as one that does not exist — the same 404 after the same
 * schema re-read (db/schema.ts refuse), its "did you mean" naming only tables the role may read;
 * another action it may not take on a table that exists is 403 FORBIDDEN. A routine it may not
 * call is unknown in the same way. Without a policy (`access` null) everything is allowed.
 */
import type { NamedRoutines } from '../db/routines.js';
import type { SchemaCache } from '../db/schema.js';
import type { TableInfo } from '../db/schema-types.js';
import { ApiError, forbidden } from '../errors.js';
import type { Action, Requested } from '../policy/policy.js';
import type { Access } from '../policy/views.js';

/** Whether the caller may do what is requested: everything without a policy. */
export function may(access: Access | null, requested: Requested): boolean {
  return access === null || access.policy.decide(access.role, requested).allowed;
}

/**
 * The table `name` when the role may take `action` on it: at once when the schema knows it and
 * the role may, else a promise (a schema re-read) or the refusal thrown.
 */
export function tableFor(
  schema: SchemaCache,
  access: Access | null,
  name: string,
  action: Action,
): TableInfo | Promise<TableInfo> {
  if (access === null) return schema.require(name);
  const { policy, role } = access;
  const decision = policy.decide(role, { kind: 'table', table: name, action });
  if (!decision.allowed && decision.refusal === 'unknown-table') {
    return schema.refuse(name, policy.readableBy(role));
  }
  const found = schema.require(name);
  // A known table at once (the policy gate's and a read's fast path); a promise only on a re-read.
  if (!(found instanceof Promise)) {
    if (!decision.allowed) throw forbidden();
    return found;
  }
  return found.then(
    (table) => {
      if (!decision.allowed) throw forbidden();
      return table;
    },
    // Not there after the same re-read: the same 404, its suggestions the role's.
    (error: unknown) => {
      throw error instanceof ApiError && error.code === 'UNKNOWN_TABLE'
        ? schema.unknown(name, policy.readableBy(role))
        : error;
    },
  );
}

/** The procedure and function named `name` when the role may call it (its 404 when not). */
export function routinesFor(
  schema: SchemaCache,
  access: Access | null,
  name: string,
): Promise<NamedRoutines> {
  if (access === null) return schema.requireRoutines(name);
  const callable = access.policy.callableBy(access.role);
  if (!may(access, { kind: 'routine', routine: name })) return schema.refuseRoutine(name, callable);
  return schema.requireRoutines(name, callable);
}
