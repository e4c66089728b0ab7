/**
 * `tablegate user add|set-role|set-password|remove|list`: the users of auth mode managed from a
 * shell, with the same connection flags and environment as `run`. A new password comes from
 * TABLEGATE_USER_PASSWORD or standard input, never from a flag. With `--policy` (or
 * TABLEGATE_POLICY) a role the policy does not define is refused. Returns what to print and the
 * exit code (0 done, 1 MySQL problem or unknown email, 2 usage); cli.ts prints and exits.
 */

import { readFile } from 'node:fs/promises';
import path from 'node:path';
import readline from 'node:readline/promises';
import { Writable } from 'node:stream';
import {
  type Credentials,
  ensureUsersTable,
  normalizeEmail,
  parseCredentials,
  roleProblem,
  UserStore,
} from '../auth/users.js';
import { DEFAULTS } from '../config.js';
import { reasonOf } from '../db/errors.js';
import { hostsLabel } from '../db/pool.js';
import { didYouMean } from '../did-you-mean.js';
import { ApiError } from '../errors.js';
import { type Database, openDatabase } from '../execute/database.js';
import { PolicyError, parsePolicyText } from '../policy/policy.js';
import { dbConfigFrom, ENVIRONMENT, type RawFlags, UsageError } from './options.js';

export const USER_SUBCOMMANDS = ['add', 'set-role', 'set-password', 'remove', 'list'] as const;

export interface UserCommandResult {
  readonly code: 0 | 1;
  /** Printed to standard output on success, to standard error (after `tablegate: `) on failure. */
  readonly output: string;
}

/** Where the new password of `user add` and `user set-password` comes from, failing the environment. */
export type PasswordSource = () => Promise<string>;

/**
 * Standard input up to its end (a pipe or file), or one line typed without echo (a terminal).
 * A single trailing newline is not part of the password.
 */
export async function readPasswordFromStdin(): Promise<string> {
  const stdin = process.stdin;
  if (stdin.isTTY) {
    process.stderr.write('New password: ');
    const silent = new Writable({ write: (_chunk, _encoding, done) => done() });
    const prompt = readline.createInterface({ input: stdin, output: silent, terminal: true });
    try {
      return await prompt.question('');
    } finally {
      prompt.close();
      process.stderr.write('\n');
    }
  }
  const chunks: Buffer[] = [];
  for await (const chunk of stdin) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

interface Parsed {
  readonly subcommand: (typeof USER_SUBCOMMANDS)[number];
  readonly email: string | null;
  readonly role: string | null;
}

function parseWords(words: readonly string[], roleFlag: string | undefined): Parsed {
  const [subcommand, ...rest] = words;
  if (!USER_SUBCOMMANDS.includes(subcommand as Parsed['subcommand'])) {
    throw new UsageError(
      subcommand === undefined
        ? `missing subcommand: user ${USER_SUBCOMMANDS.join(', user ')}`
        : `unknown subcommand 'user ${subcommand}'`,
    );
  }
  const wanted = {
    add: 1,
    'set-role': roleFlag === undefined ? 2 : 1,
    'set-password': 1,
    remove: 1,
    list: 0,
  }[subcommand as Parsed['subcommand']];
  if (rest.length !== wanted) {
    const shape = {
      add: 'user add <email> [--role <role>]',
      'set-role': 'user set-role <email> <role>',
      'set-password': 'user set-password <email>',
      remove: 'user remove <email>',
      list: 'user list',
    }[subcommand as Parsed['subcommand']];
    throw new UsageError(
      `'${shape}' takes ${wanted === 0 ? 'no arguments' : 'the arguments shown'}`,
    );
  }
  if (roleFlag !== undefined && subcommand !== 'add' && subcommand !== 'set-role') {
    throw new UsageError(`--role is for 'user add' and 'user set-role'`);
  }
  const role =
    subcommand === 'set-role'
      ? (rest[1] ?? roleFlag ?? null)
      : subcommand === 'add'
        ? (roleFlag ?? DEFAULTS.defaultRole)
        : null;
  if (role !== null) {
    const problem = roleProblem(role);
    if (problem !== null) throw new UsageError(`role '${role}': ${problem}`);
  }
  return { subcommand: subcommand as Parsed['subcommand'], email: rest[0] ?? null, role };
}

/**
 * The roles `--policy` defines, read from the file alone (the tables it names are the gateway's
 * to check against the schema): a file that cannot be read or parsed is a usage error.
 */
async function policyRoles(file: string): Promise<ReadonlySet<string>> {
  const problem = (why: string) => new UsageError(`--policy ${file}: ${why}`);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw problem(`cannot read it: ${(error as { code?: string }).code ?? String(error)}`);
  }
  let document: unknown;
  try {
    document = parsePolicyText(text, file);
  } catch (error) {
    if (error instanceof PolicyError) throw problem(error.message);
    throw error;
  }
  const roles = (document as { roles?: unknown } | null)?.roles;
  if (typeof roles !== 'object' || roles === null || Array.isArray(roles)) {
    throw problem("it has no 'roles' object");
  }
  return new Set(Object.keys(roles));
}

/** With a policy, a role it does not define would let its user do nothing: refused. */
async function checkRoleAgainstPolicy(
  role: string | null,
  flags: RawFlags,
  env: NodeJS.ProcessEnv,
): Promise<void> {
  const file = flags.policy ?? env[ENVIRONMENT.policy as string];
  if (role === null || file === undefined || file === '') return;
  const roles = await policyRoles(path.resolve(file));
  if (!roles.has(role)) {
    const known = [...roles];
    throw new UsageError(
      `role '${role}' is not defined by the policy ${file} (it defines ${known.length === 0 ? 'none' : known.map((r) => `'${r}'`).join(', ')})${didYouMean(role, known)}`,
    );
  }
}

/**
 * Runs one `tablegate user …`. Usage problems (including a missing, empty or too short password,
 * or a role the policy does not define) throw UsageError before anything touches MySQL, so
 * nothing is created or changed then.
 */
export async function runUserCommand(
  words: readonly string[],
  flags: RawFlags,
  roleFlag: string | undefined,
  env: NodeJS.ProcessEnv,
  readPassword: PasswordSource,
): Promise<UserCommandResult> {
  const parsed = parseWords(words, roleFlag);
  const db = dbConfigFrom(flags, env, 1);
  await checkRoleAgainstPolicy(parsed.role, flags, env);
  let credentials: Credentials | null = null;
  if (parsed.subcommand === 'add' || parsed.subcommand === 'set-password') {
    const password = env.TABLEGATE_USER_PASSWORD ?? (await readPassword());
    try {
      credentials = parseCredentials({ email: parsed.email, password });
    } catch (error) {
      const message = error instanceof ApiError ? error.message : String(error);
      throw new UsageError(
        `${message} (the new password comes from TABLEGATE_USER_PASSWORD or standard input)`,
      );
    }
  }
  let database: Database | null = null;
  try {
    database = await openDatabase(db, {
      statementTimeoutMs: DEFAULTS.queryTimeoutMs,
      stallTimeoutMs: DEFAULTS.stallTimeoutMs,
    });
    await ensureUsersTable(database);
    const users = await UserStore.open(database);
    return await perform(users, parsed, credentials);
  } catch (error) {
    return { code: 1, output: `MySQL at ${hostsLabel(db)} as ${db.user}: ${reasonOf(error)}` };
  } finally {
    await database?.close().catch(() => {});
  }
}

async function perform(
  users: UserStore,
  parsed: Parsed,
  credentials: Credentials | null,
): Promise<UserCommandResult> {
  const email = normalizeEmail(parsed.email ?? '');
  switch (parsed.subcommand) {
    case 'add': {
      try {
        const user = await users.add(
          credentials as NonNullable<typeof credentials>,
          parsed.role as string,
        );
        return { code: 0, output: `added ${user.email} (id ${user.id}, role ${user.role})` };
      } catch (error) {
        if (error instanceof ApiError && error.code === 'USER_EXISTS') {
          return { code: 1, output: `a user with the email ${email} already exists` };
        }
        throw error;
      }
    }
    case 'set-role':
      return (await users.setRole(email, parsed.role as string))
        ? {
            code: 0,
            output: `${email} now has the role ${parsed.role}; tokens they hold stop working within 10 s (they log in again)`,
          }
        : { code: 1, output: `no user has the email ${email}` };
    case 'set-password':
      return (await users.setPassword(
        email,
        (credentials as NonNullable<typeof credentials>).password,
      ))
        ? {
            code: 0,
            output: `${email} has a new password; tokens they hold stop working within 10 s`,
          }
        : { code: 1, output: `no user has the email ${email}` };
    case 'remove':
      return (await users.remove(email))
        ? { code: 0, output: `removed ${email}; tokens they hold stop working within 10 s` }
        : { code: 1, output: `no user has the email ${email}` };
    case 'list': {
      const listed = await users.list();
      const lines = listed.map((u) => `${u.id}\t${u.email}\t${u.role}\t${u.createdAt}`);
      return { code: 0, output: ['id\temail\trole\tcreated_at', ...lines].join('\n') };
    }
  }
}
