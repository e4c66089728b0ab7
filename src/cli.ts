#!/usr/bin/env node
/**
 * The `tablegate` command: parses argv with meow, builds the Config, starts the gateway. The only
 * place that calls process.exit: 2 for a usage error, 1 when the gateway cannot start.
 */
import meow from 'meow';
import {
  configFromRun,
  FLAG_NAMES,
  type RawFlags,
  SHORT_FLAGS,
  USAGE,
  UsageError,
} from './cli/options.js';
import { unknownOptionMessage, unknownOptions, usageLine } from './cli/usage.js';
import { readPasswordFromStdin, runUserCommand } from './cli/user-command.js';
import { runWebhookCommand } from './cli/webhook-command.js';
import { Demo, DemoError, DemoInterrupted, demoBanner, demoSettings } from './demo/demo.js';
import { didYouMean } from './did-you-mean.js';
import { StartupError, startGateway } from './main.js';

const COMMANDS = ['run', 'demo', 'user', 'webhook'];

/** One line naming the problem; a usage error adds one usage line pointing at --help. */
function fail(message: string, code: number, withUsage: boolean): never {
  const command = process.argv.slice(2).find((word) => COMMANDS.includes(word));
  process.stderr.write(`tablegate: ${message}\n${withUsage ? `${usageLine(command)}\n` : ''}`);
  process.exit(code);
}

function parse() {
  const flags = Object.fromEntries(
    FLAG_NAMES.map((name) => [name, { type: 'string' as const, shortFlag: SHORT_FLAGS[name] }]),
  );
  let cli: ReturnType<typeof meow>;
  try {
    cli = meow(USAGE, {
      importMeta: import.meta,
      description: false,
      autoHelp: false,
      autoVersion: true,
      // Unknown options are reported below, in our style and with a suggestion.
      allowUnknownFlags: true,
      // -h is the MySQL host (docs/configuration.md); help is only --help.
      // --role belongs to `user add` / `user set-role` only.
      flags: { ...flags, help: { type: 'boolean' }, role: { type: 'string' } },
    });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    // meow's "The flag --host can only be set once." in our words.
    const repeated = /^The flag (--\S+) can only be set once\.$/.exec(message)?.[1];
    fail(repeated ? `${repeated} is given more than once` : message, 2, true);
  }
  const [unknown] = unknownOptions(cli.unnormalizedFlags);
  if (unknown !== undefined) fail(unknownOptionMessage(unknown), 2, true);
  return cli;
}

async function main(): Promise<void> {
  const cli = parse();
  if (cli.flags.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const [command, ...words] = cli.input;
  if (command !== 'run' && command !== 'demo' && command !== 'user' && command !== 'webhook') {
    fail(
      command
        ? `unknown command '${command}'${didYouMean(command, COMMANDS)}`
        : 'missing command: run, user, webhook or demo',
      2,
      true,
    );
  }
  const role = typeof cli.flags.role === 'string' ? cli.flags.role : undefined;
  if (role !== undefined && command !== 'user') fail(`--role is for 'tablegate user'`, 2, true);
  const given: RawFlags = Object.fromEntries(
    FLAG_NAMES.flatMap((name) => {
      const value = cli.flags[name];
      return typeof value === 'string' ? [[name, value]] : [];
    }),
  );
  if (command === 'demo') return demo(words, given);
  if (command === 'user') return user(words, given, role);
  if (command === 'webhook') return webhook(words, given);
  let config: ReturnType<typeof configFromRun>;
  try {
    config = configFromRun(words, given, process.env);
  } catch (error) {
    if (error instanceof UsageError) fail(error.message, 2, true);
    throw error;
  }
  try {
    await startGateway(config);
  } catch (error) {
    if (error instanceof StartupError) fail(error.message, error.exitCode, false);
    throw error;
  }
}

/** `tablegate user …`: one line (or the list) and exit 0, 1 or 2. */
async function user(words: string[], given: RawFlags, role: string | undefined): Promise<void> {
  let result: Awaited<ReturnType<typeof runUserCommand>>;
  try {
    result = await runUserCommand(words, given, role, process.env, readPasswordFromStdin);
  } catch (error) {
    if (error instanceof UsageError) fail(error.message, 2, true);
    throw error;
  }
  if (result.code !== 0) fail(result.output, result.code, false);
  process.stdout.write(`${result.output}\n`);
}

/** `tablegate webhook dead-letters`: JSON Lines and exit 0, or one line and exit 1 or 2. */
async function webhook(words: string[], given: RawFlags): Promise<void> {
  let result: Awaited<ReturnType<typeof runWebhookCommand>>;
  try {
    result = await runWebhookCommand(words, given, process.env);
  } catch (error) {
    if (error instanceof UsageError) fail(error.message, 2, true);
    throw error;
  }
  if (result.code !== 0) fail(result.output, result.code, false);
  if (result.output !== '') process.stdout.write(`${result.output}\n`);
}

/** `tablegate demo`: start, print how to use it, stop everything on SIGINT/SIGTERM. */
async function demo(words: string[], given: RawFlags): Promise<void> {
  let settings: ReturnType<typeof demoSettings>;
  try {
    settings = demoSettings(words, given, process.env);
  } catch (error) {
    if (error instanceof UsageError) fail(error.message, 2, true);
    throw error;
  }
  const running = new Demo(settings);
  const stop = () => {
    running.stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  try {
    process.stdout.write(demoBanner(await running.start()));
  } catch (error) {
    // Interrupted: stop() is already cleaning up and exits.
    if (error instanceof DemoInterrupted) return;
    await running.stop();
    if (error instanceof DemoError) fail(error.message, 1, false);
    throw error;
  }
}

main().catch((error: unknown) => {
  fail(error instanceof Error ? error.message : String(error), 1, false);
});
