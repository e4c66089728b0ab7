/**
 * The built `tablegate` command (dist/cli.js, as users run it) and the connection flags that
 * point it at the test server, shared by the tests that start it as a process.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { testServer } from './mysql-url.js';

export const CLI = path.resolve('dist/cli.js');

/** The command's path; a missing build is said plainly instead of a spawn error. */
export function builtCli(): string {
  if (!existsSync(CLI)) throw new Error('dist/cli.js is missing: run `npm run build` first');
  return CLI;
}

/** `-h -u -p -P -D` for the test server and `database`. */
export function connectionFlags(database: string, server = testServer()): string[] {
  return [
    '-h',
    server.host,
    '-u',
    server.user,
    '-p',
    server.password,
    '-P',
    String(server.port),
    '-D',
    database,
  ];
}
