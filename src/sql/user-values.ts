/**
 * A policy's `@user.id`, `@user.email` and `@user.role` in compiled SQL: a marker among the
 * parameters, replaced by the caller's value when the statement runs (bindUser). So a read's
 * SQL is the same for every user of a role and can be kept (pipeline/read-cache.ts), and the
 * values never enter the text.
 */
import { USER_FIELDS, type UserField } from '../query/ast.js';
import type { CompiledQuery } from './compiled-query.js';

/** The signed-in caller's values; null for `anonymous`. */
export type UserValues = Readonly<Record<UserField, string>>;

/**
 * A marker: the value of `field`, as text, or (`integer`) as text only when it is an integer,
 * else NULL, for a comparison with an integer column that must never convert a non-number
 * (MySQL reads 'auth0|42' as 0, and in an UPDATE's WHERE strict mode makes that an error).
 */
export class UserValue {
  constructor(
    readonly field: UserField,
    readonly as: 'text' | 'integer',
  ) {}

  of(user: UserValues): string | null {
    const value = user[this.field];
    return this.as === 'text' || /^-?[0-9]+$/.test(value) ? value : null;
  }
}

const MARKERS = {
  text: Object.fromEntries(USER_FIELDS.map((f) => [f, new UserValue(f, 'text')])),
  integer: Object.fromEntries(USER_FIELDS.map((f) => [f, new UserValue(f, 'integer')])),
} as Readonly<Record<UserValue['as'], Readonly<Record<UserField, UserValue>>>>;

export function userValue(field: UserField, as: UserValue['as'] = 'text'): UserValue {
  return MARKERS[as][field];
}

/** Whether the parameters hold a caller's value to put in. */
export function namesUser(params: readonly unknown[]): boolean {
  return params.some((param) => param instanceof UserValue);
}

/** The query with the caller's values in place of the markers (the same query when none). */
export function bindUser(query: CompiledQuery, user: UserValues | null): CompiledQuery {
  if (!namesUser(query.params)) return query;
  // A role without a user (anonymous) has no where naming @user: policy validation refuses it.
  if (user === null) throw new Error('@user in a statement without a signed-in user');
  return {
    sql: query.sql,
    params: query.params.map((param) => (param instanceof UserValue ? param.of(user) : param)),
  };
}
