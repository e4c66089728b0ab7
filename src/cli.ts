#!/usr/bin/env node
/**
 * The `tablegate` command: parses argv with meow, builds the Config, starts the gateway. The only
 * place that calls process.exit: 2 for a usage error, 1 when the gateway cannot start.
 */
import meow from 'meow';
import { configFromRun, FLAG_NAMES, SHORT_FLAGS, USAGE, UsageError } from './cli-options.js';
import { StartupError, startGateway } from './main.js';

function fail(message: string, code: number, withUsage: boolean): never {
  process.stderr.write(`tablegate: ${message}\n${withUsage ? `\n${USAGE}\n` : ''}`);
  process.exit(code);
}

function parse() {
  const flags = Object.fromEntries(
    FLAG_NAMES.map((name) => [name, { type: 'string' as const, shortFlag: SHORT_FLAGS[name] }]),
  );
  try {
    return meow(USAGE, {
      importMeta: import.meta,
      description: false,
      autoHelp: false,
      autoVersion: true,
      allowUnknownFlags: false,
      // -h is the MySQL host (CONTRACT §1); help is only --help.
      flags: { ...flags, help: { type: 'boolean' } },
    });
  } catch (error) {
    fail(error instanceof Error ? error.message : String(error), 2, true);
  }
}

async function main(): Promise<void> {
  const cli = parse();
  if (cli.flags.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const [command, ...words] = cli.input;
  if (command !== 'run') {
    fail(command ? `unknown command '${command}'` : 'missing command: run', 2, true);
  }
  const given = Object.fromEntries(
    FLAG_NAMES.flatMap((name) => {
      const value = cli.flags[name];
      return typeof value === 'string' ? [[name, value]] : [];
    }),
  );
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
    if (error instanceof StartupError) fail(error.message, 1, false);
    throw error;
  }
}

main().catch((error: unknown) => {
  fail(error instanceof Error ? error.message : String(error), 1, false);
});
