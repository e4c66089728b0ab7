/**
 * Which routines the gateway's MySQL user may execute, read from its own `SHOW GRANTS`: EXECUTE
 * (or ALL PRIVILEGES) on every database, on the served one (a database grant may name a pattern,
 * `shop\_%`), or on the routine itself. information_schema.ROUTINES also lists routines the user
 * may only see — its own as definer, every one under a global SELECT, CREATE or ALTER ROUTINE —
 * and those are not served (docs/routines.md). When the grants cannot be read whole (a role,
 * whose privileges MySQL does not list; a partial revoke; a line not understood), every listed
 * routine counts as executable and MySQL has the last word (403 ER_PROCACCESS_DENIED_ERROR).
 */

export type RoutineKind = 'procedure' | 'function';

export interface ExecuteGrants {
  /** Whether the user may execute the routine `name` of the served database. */
  may(kind: RoutineKind, name: string): boolean;
}

/** Everything the server lists: the grants could not be read whole. */
export const EVERYTHING: ExecuteGrants = { may: () => true };

/** A backquoted name, `` `` `` standing for a backquote inside it. */
const QUOTED = /^`((?:[^`]|``)*)`/;

/** A grant line's parts: its privileges, on what, to whom; null for a line of another shape. */
function splitGrant(line: string): { privileges: string[]; target: string } | null {
  if (!line.startsWith('GRANT ')) return null;
  let depth = 0;
  let quoted = false;
  const privileges: string[] = [];
  let start = 'GRANT '.length;
  for (let at = start; at < line.length; at++) {
    const char = line[at];
    if (char === '`') quoted = !quoted;
    if (quoted) continue;
    if (char === '(') depth++;
    else if (char === ')') depth--;
    else if (depth === 0 && char === ',') {
      privileges.push(line.slice(start, at).trim());
      start = at + 1;
    } else if (depth === 0 && line.startsWith(' ON ', at)) {
      privileges.push(line.slice(start, at).trim());
      const rest = line.slice(at + ' ON '.length);
      const to = targetEnd(rest);
      return to === -1 ? null : { privileges, target: rest.slice(0, to) };
    }
  }
  return null;
}

/** Where ` TO ` ends the target (outside backquotes), or -1. */
function targetEnd(text: string): number {
  let quoted = false;
  for (let at = 0; at < text.length; at++) {
    if (text[at] === '`') quoted = !quoted;
    else if (!quoted && text.startsWith(' TO ', at)) return at;
  }
  return -1;
}

/** Reads one quoted name at the start of `text`: the name and the rest, or null. */
function quotedName(text: string): { name: string; rest: string } | null {
  const match = QUOTED.exec(text);
  if (match === null) return null;
  return { name: (match[1] as string).replaceAll('``', '`'), rest: text.slice(match[0].length) };
}

/** A database grant's name as a LIKE pattern (`%`, `_`, `\` escaping), matched against `name`. */
export function databasePatternMatches(pattern: string, name: string): boolean {
  let source = '^';
  for (let at = 0; at < pattern.length; at++) {
    const char = pattern[at] as string;
    if (char === '\\' && at + 1 < pattern.length) {
      at++;
      source += escapeRegExp(pattern[at] as string);
    } else if (char === '%') source += '[\\s\\S]*';
    else if (char === '_') source += '[\\s\\S]';
    else source += escapeRegExp(char);
  }
  return new RegExp(`${source}$`, 'u').test(name);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Whether a privilege list gives EXECUTE. */
function executes(privileges: readonly string[]): boolean {
  return privileges.some((p) => {
    const privilege = p.toUpperCase();
    return privilege === 'EXECUTE' || privilege === 'ALL PRIVILEGES' || privilege === 'ALL';
  });
}

/** The lines of `SHOW GRANTS` for the current user → what it may execute in `database`. */
export function executeGrants(lines: readonly string[], database: string): ExecuteGrants {
  let all = false;
  const routines = new Set<string>();
  for (const line of lines) {
    // MariaDB lists the default role it sets: nothing to execute there.
    if (line.startsWith('SET DEFAULT ROLE ')) continue;
    const grant = splitGrant(line);
    // A role granted (`GRANT role TO user`, no ON), a REVOKE, anything else: not read whole.
    if (grant === null) return EVERYTHING;
    if (!executes(grant.privileges)) continue;
    const { target } = grant;
    if (target === '*.*') {
      all = true;
      continue;
    }
    const kind = /^(PROCEDURE|FUNCTION) /.exec(target)?.[1];
    const named = quotedName(kind === undefined ? target : target.slice(kind.length + 1));
    if (named === null) return EVERYTHING;
    if (kind === undefined) {
      // `db`.* — a database grant (a table grant gives no EXECUTE).
      if (named.rest === '.*' && databasePatternMatches(named.name, database)) all = true;
      continue;
    }
    if (!named.rest.startsWith('.')) return EVERYTHING;
    const routine = quotedName(named.rest.slice(1));
    if (routine === null || routine.rest !== '') return EVERYTHING;
    // Routine grants name the database exactly, no pattern.
    if (named.name === database) routines.add(`${kind.toLowerCase()} ${routine.name}`);
  }
  if (all) return EVERYTHING;
  // Routine names are not case-sensitive in MySQL.
  const lower = new Set([...routines].map((key) => key.toLowerCase()));
  return { may: (kind, name) => lower.has(`${kind} ${name}`.toLowerCase()) };
}
