/**
 * A policy's `@user.id`, `@user.email` and `@user.role` in compiled SQL: a marker among the
 * parameters, replaced by the caller's value when the statement runs (bindUser). So a read's
 * SQL is the same for every user of a role and can be kept (pipeline/read-cache.ts), and the
 * values never enter the text.
 */
import { type MatchFn, USER_FIELDS, type UserField } from '../query/ast.js';
import type { CompiledQuery } from './compiled-query.js';

/** The signed-in caller's values; null for `anonymous`. */
export type UserValues = Readonly<Record<UserField, string>>;

/** How a caller's value is put in: as text, an integer, or a LIKE pattern of a match function. */
type As = 'text' | 'integer' | MatchFn;

/**
 * A marker: the value of `field`, as text; or (`integer`) as text only when it is an integer,
 * else NULL, for a comparison with an integer column that must never convert a non-number
 * (MySQL reads 'auth0|42' as 0, and in an UPDATE's WHERE strict mode makes that an error); or
 * as the LIKE pattern of contains/startswith/endswith.
 */
export class UserValue {
  constructor(
    readonly field: UserField,
    readonly as: As,
  ) {}

  of(user: UserValues): string | null {
    const value = user[this.field];
    if (this.as === 'text') return value;
    if (this.as === 'integer') return /^-?[0-9]+$/.test(value) ? value : null;
    return likePattern(this.as, value);
  }
}

/** The LIKE pattern (escape `!`) that finds `text` literally as contains/startswith/endswith say. */
export function likePattern(fn: MatchFn, text: string): string {
  const escaped = text.replace(/[!%_]/g, '!$&');
  return fn === 'contains' ? `%${escaped}%` : fn === 'startswith' ? `${escaped}%` : `%${escaped}`;
}

/** Integer text as MySQL shows an integer: no sign on 0, no leading zeros. */
export const isCanonicalInteger = (text: string): boolean => /^(?:0|-?[1-9]\d*)$/.test(text);

const AS: readonly As[] = ['text', 'integer', 'contains', 'startswith', 'endswith'];
const MARKERS = Object.fromEntries(
  AS.map((as) => [as, Object.fromEntries(USER_FIELDS.map((f) => [f, new UserValue(f, as)]))]),
) as Readonly<Record<As, Readonly<Record<UserField, UserValue>>>>;

export function userValue(field: UserField, as: As = 'text'): UserValue {
  return MARKERS[as][field] as UserValue;
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
