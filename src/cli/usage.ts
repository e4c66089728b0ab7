/**
 * How a usage error is told: one line naming the problem (with "did you mean …?" when a known
 * word is close, src/did-you-mean.ts) and one line of usage pointing at `--help`, instead of meow's bare
 * `Unknown flag` or the whole help text that pushes the problem off screen.
 */
import { didYouMean } from '../did-you-mean.js';
import { FLAG_NAMES, SHORT_FLAGS } from './options.js';

/** The second line of every usage error: the synopsis of the command, and where the rest is. */
export function usageLine(command: string | undefined): string {
  const synopsis =
    command === 'demo'
      ? 'tablegate demo [-o <output_port>] [-h <host> -u <user> -p <password> -P <port> -D <database>]'
      : command === 'user'
        ? 'tablegate user add|set-role|remove|list … -h <host> -u <user> -p <password> -P <port> -D <database>'
        : command === 'webhook'
          ? 'tablegate webhook dead-letters [<name>] -h <host> -u <user> -p <password> -P <port> -D <database>'
          : 'tablegate run [auth] -h <host> -u <user> -p <password> -P <port> -D <database> -o <output_port>';
  return `usage: ${synopsis}  (all options: tablegate --help)`;
}

const kebab = (name: string) => name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

/** Every long option as typed: `--database`, `--listen-host`, `--help`, `--version`. */
export const LONG_OPTIONS: readonly string[] = [
  ...FLAG_NAMES.map((name) => `--${kebab(name)}`),
  '--role',
  '--help',
  '--version',
];

const KNOWN_KEYS: ReadonlySet<string> = new Set([
  ...FLAG_NAMES,
  ...Object.values(SHORT_FLAGS),
  'role',
  'help',
  'version',
]);

/**
 * The options meow parsed that tablegate does not know, as the user typed them (`--databse`,
 * `-x`), from meow's `unnormalizedFlags` (keys camel-cased, short flags as single letters).
 */
export function unknownOptions(parsed: Readonly<Record<string, unknown>>): string[] {
  return Object.keys(parsed)
    .filter((key) => !KNOWN_KEYS.has(key))
    .map((key) => (key.length === 1 ? `-${key}` : `--${kebab(key)}`));
}

/** `unknown option --databse: did you mean --database?` */
export function unknownOptionMessage(option: string): string {
  const hint = option.startsWith('--') ? didYouMean(option, LONG_OPTIONS, '') : '';
  return `unknown option ${option}${hint}`;
}
