/**
 * Every example of README.md and docs/*.md runs, and answers what the page prints under it
 * (CONTRIBUTING.md, "Examples in the documentation"). Each ```sh block runs on a fresh copy of
 * the example database (docker/initdb/01-example.sql) behind a real gateway: open mode, or auth
 * mode with the demo user's token in $TOKEN, or auth mode under the page's policy; its commands
 * run one after another in bash with the real curl, and each one's answer (status, the headers
 * shown, the body) is compared with the `# ` lines printed under it. A block that cannot run
 * here says why in an `<!-- example: not run: … -->` line above it; so does a ```js block.
 */
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

const PAGES = [
  'README.md',
  ...readdirSync('docs')
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];
const EXAMPLE_SQL = readFileSync('docker/initdb/01-example.sql', 'utf8');
const JWT_SECRET = 'docs-examples-secret-0123456789abcdefghijkl';
/** The demo's user (src/demo/demo.ts), with a password of the test's own. */
const DEMO_USER = { email: 'demo@tablegate.dev', password: 'docs examples password' };
/** Each command's time limit: a command that would wait (a server, a prompt) fails, not hangs. */
const COMMAND_TIMEOUT_MS = 10_000;

type Mode = 'open' | 'auth' | 'policy';

interface Command {
  /** The command as printed, continuation lines joined with newlines (bash skips a `# …`). */
  readonly text: string;
  readonly line: number;
  /** The `# ` lines printed right under it, without the `# `. */
  readonly shown: string[];
}

interface Block {
  readonly page: string;
  readonly line: number;
  readonly language: string;
  /** Why the block is not run, from its `<!-- example: not run: … -->` marker; null: it runs. */
  readonly notRun: string | null;
  readonly mode: Mode;
  /** Under `policy`: the page's last ```json block above it. */
  readonly policy: string | null;
  readonly commands: Command[];
}

const MARKER = /^\s*<!-- example: (.*?) -->$/;
/** The fences whose lines are commands for a shell. */
const SHELL = ['sh', 'bash', 'shell'];

/** The shell and ```js blocks of a page, with the marker above each and its commands. */
function blocksOf(page: string): Block[] {
  const lines = readFileSync(page, 'utf8').split('\n');
  const blocks: Block[] = [];
  let lastJson: string | null = null;
  for (let i = 0; i < lines.length; i++) {
    // A fence may be indented, inside a list item; its lines are then indented as much.
    const fence = /^( *)```(\w*)$/.exec(lines[i] ?? '');
    if (!fence) continue;
    const indent = fence[1] ?? '';
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && lines[i] !== `${indent}\`\`\``; i++) {
      body.push((lines[i] ?? '').slice(indent.length));
    }
    const language = fence[2] ?? '';
    if (language === 'json') lastJson = body.join('\n');
    if (!SHELL.includes(language) && language !== 'js') continue;
    let above = start - 1;
    while (above >= 0 && lines[above]?.trim() === '') above--;
    const marker = MARKER.exec(lines[above] ?? '')?.[1] ?? '';
    const notRun = /^not run: (.+)$/.exec(marker)?.[1] ?? (marker === 'not run' ? '' : null);
    const mode: Mode = marker === 'auth' ? 'auth' : marker === 'policy' ? 'policy' : 'open';
    if (marker && notRun === null && !['auth', 'policy', 'open'].includes(marker)) {
      throw new Error(`${page}:${above + 1}: unknown example marker '${marker}'`);
    }
    blocks.push({
      page,
      line: start + 1,
      language,
      notRun,
      mode,
      policy: mode === 'policy' ? lastJson : null,
      commands:
        language === 'js'
          ? [{ text: body.join('\n'), line: start + 2, shown: [] }]
          : commandsOf(body, start + 2),
    });
  }
  return blocks;
}

/**
 * A block's commands: a line that is not a comment starts one, a line after one ending in `\`
 * or starting with `|` continues it; the `# ` lines right under it are its answer, and a `#`
 * line after a blank line (or at the start) is prose.
 */
function commandsOf(body: string[], firstLine: number): Command[] {
  const commands: Command[] = [];
  let current: { text: string; line: number; shown: string[] } | null = null;
  let open = false;
  body.forEach((raw, index) => {
    if (raw.trim() === '') {
      current = null;
      open = false;
    } else if (raw.startsWith('#')) {
      if (current) current.shown.push(raw.replace(/^# ?/, ''));
    } else if (current && open && current.shown.length === 0) {
      current.text += `\n${raw}`;
    } else if (current && /^\s*\|/.test(raw) && current.shown.length === 0) {
      current.text += `\n${raw}`;
    } else {
      current = { text: raw, line: firstLine + index, shown: [] };
      commands.push(current);
    }
    open = current !== null && raw.endsWith('\\');
  });
  return commands;
}

/** The printed answer as one text: a line that starts with a space continues the one before. */
function joined(lines: readonly string[]): string[] {
  const result: string[] = [];
  for (const line of lines) {
    if (/^\s/.test(line) && result.length > 0) result[result.length - 1] += line.trimStart();
    else result.push(line);
  }
  return result;
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/**
 * `…` in a printed answer stands for any text (what varies: a token, a time of now), and
 * `<stored name>` for the name an upload was stored under (as in the Docker walk-through).
 */
function matches(shown: string, actual: string): boolean {
  const source = escapeRegExp(shown)
    .replaceAll('…', '[\\s\\S]*?')
    .replaceAll('<stored name>', '[^"/]+');
  return new RegExp(`^${source}$`).test(actual);
}

/**
 * Every request's status goes to stderr as `@@status NNN` (the curl of the examples is the real
 * one, silent as curl is when its output is read by a pipe).
 */
const PRELUDE = `curl() { command curl --silent --show-error --write-out '%{stderr}\\n@@status %{http_code}\\n' "$@"; }\n`;

interface Outcome {
  readonly exit: number;
  readonly stdout: string;
  readonly stderr: string;
  readonly status: number | null;
}

function runBash(script: string, cwd: string, env: NodeJS.ProcessEnv): Promise<Outcome> {
  return new Promise((resolve) => {
    // Its own process group, so that a command past its time is stopped with all it started.
    const child = spawn('bash', ['-o', 'pipefail', '-c', PRELUDE + script], {
      cwd,
      env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      if (child.pid) process.kill(-child.pid, 'SIGKILL');
    }, COMMAND_TIMEOUT_MS);
    child.on('close', (code) => {
      clearTimeout(timer);
      const statuses = [...stderr.matchAll(/^@@status (\d{3})$/gm)];
      if (timedOut) stderr += `\nstopped after ${COMMAND_TIMEOUT_MS} ms`;
      resolve({
        exit: code ?? -1,
        stdout,
        stderr: stderr.replace(/^@@status \d{3}\n?/gm, '').trim(),
        status: statuses.length > 0 ? Number(statuses.at(-1)?.[1]) : null,
      });
    });
  });
}

/** Where the page's URLs point (`localhost:8080`, `127.0.0.1:8080`), and the gateway's. */
const PAGE_HOSTS = /\b(?:localhost|127\.0\.0\.1):8080\b/g;

/**
 * What a command answers, checked against what the page prints under it: its status (a leading
 * `NNN ` on the first line, else any 2xx), the headers shown (with `-i`: each among the
 * answer's, the others left out) and the body, exactly but for `…`, CRLF and the gateway's
 * address, which the page writes as its own.
 */
function check(command: Command, outcome: Outcome, gatewayHost: string): string[] {
  const problems: string[] = [];
  if (outcome.exit !== 0) problems.push(`exit ${outcome.exit}: ${outcome.stderr}`);
  const shown = joined(command.shown);
  let status: number | null = null;
  const first = /^(\d{3}) (.*)$/.exec(shown[0] ?? '');
  if (first) {
    status = Number(first[1]);
    shown[0] = first[2] ?? '';
  }
  const pageHost =
    /\b(?:localhost|127\.0\.0\.1):8080\b/.exec(command.text)?.[0] ?? 'localhost:8080';
  let actual = outcome.stdout.replaceAll('\r\n', '\n').replaceAll(gatewayHost, pageHost);
  let headers: string[] = [];
  if (/^HTTP\/[\d.]+ \d{3}/.test(actual)) {
    const end = actual.indexOf('\n\n');
    headers = actual.slice(0, end).split('\n');
    actual = actual.slice(end + 2);
  }
  const header = /^(HTTP\/[\d.]+ \d{3}|[A-Za-z][\w-]*: )/;
  const shownHeaders = shown.filter((l) => header.test(l));
  const shownBody = shown.filter((l) => !header.test(l)).join('\n');
  if (status !== null && outcome.status !== status) {
    problems.push(`status ${outcome.status}, printed ${status}`);
  } else if (status === null && outcome.status !== null && outcome.status >= 300) {
    problems.push(`status ${outcome.status}: an answer that is not 2xx must print its status`);
  }
  const split = (h: string) => {
    const colon = h.indexOf(': ');
    return /^HTTP\//.test(h)
      ? ['status', h]
      : [h.slice(0, colon).toLowerCase(), h.slice(colon + 2)];
  };
  for (const line of shownHeaders) {
    const [name, value] = split(line);
    if (!headers.some((h) => split(h)[0] === name && matches(value ?? '', split(h)[1] ?? ''))) {
      problems.push(`header '${line}' not among:\n${headers.join('\n')}`);
    }
  }
  if (shownBody !== '' && !matches(shownBody, actual.trimEnd())) {
    problems.push(`printed:\n${shownBody}\ngot:\n${actual.trimEnd()}`);
  }
  return problems;
}

/** The gateway a block runs against, on its own copy of the example database. */
async function gatewayFor(block: Block, dir: string) {
  const db = await createTestDatabase(EXAMPLE_SQL);
  // npx finds the project's packages through the link to node_modules, and asks no registry.
  await symlink(path.resolve('node_modules'), path.join(dir, 'node_modules'));
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: dir,
    LANG: 'C.UTF-8',
    npm_config_offline: 'true',
    npm_config_update_notifier: 'false',
  };
  try {
    return { db, gateway: await startGateway(block, db, dir, env), env };
  } catch (error) {
    await db.drop();
    throw error;
  }
}

/** The gateway of the block's mode; in auth mode, the demo user's token goes into `env`. */
async function startGateway(
  block: Block,
  db: TestDatabase,
  dir: string,
  env: NodeJS.ProcessEnv,
): Promise<TestGateway> {
  if (block.mode === 'open') return startTestGateway(db.name);
  let policyFile: string | null = null;
  if (block.mode === 'policy') {
    if (!block.policy) throw new Error(`${block.page}:${block.line}: no \`\`\`json policy above`);
    policyFile = path.join(dir, 'policy.json');
    await writeFile(policyFile, block.policy);
  }
  const gateway = await startTestGateway(db.name, {
    mode: 'auth',
    jwtSecret: JWT_SECRET,
    policyFile,
  });
  if (block.mode === 'auth') {
    try {
      const headers = { 'content-type': 'application/json' };
      const body = JSON.stringify(DEMO_USER);
      await fetch(`${gateway.url}/auth/register`, { method: 'POST', headers, body });
      const login = await fetch(`${gateway.url}/auth/login`, { method: 'POST', headers, body });
      env.TOKEN = ((await login.json()) as { token: string }).token;
    } catch (error) {
      await gateway.close();
      throw error;
    }
  }
  return gateway;
}

/** The constructor of async functions: a ```js block's text becomes one's body. */
const AsyncFunction = (async () => {}).constructor as new (
  ...args: string[]
) => (...values: unknown[]) => Promise<unknown>;

/**
 * Runs a ```js block as the body of an async function, given `api` (the gateway's URL),
 * `headers` (with `$TOKEN` in auth mode), `page` (0), `handle` (takes a row) and a `fetch` that
 * resolves a URL relative to the gateway as a browser on its page would; each request it makes
 * must answer 2xx.
 */
async function runJs(command: Command, api: string, env: NodeJS.ProcessEnv): Promise<string[]> {
  const problems: string[] = [];
  const pageFetch = async (url: string | URL, init?: RequestInit) => {
    const response = await fetch(new URL(url, api), init);
    if (response.status >= 300)
      problems.push(`${url}: ${response.status} ${await response.clone().text()}`);
    return response;
  };
  const headers: Record<string, string> = env.TOKEN ? { authorization: `Bearer ${env.TOKEN}` } : {};
  const run = new AsyncFunction('api', 'headers', 'page', 'handle', 'fetch', command.text);
  try {
    await run(api, headers, 0, () => {}, pageFetch);
  } catch (error) {
    problems.push(`threw ${String(error)}`);
  }
  return problems;
}

/** Runs a block's commands in order, and says each that does not answer as printed. */
async function runBlock(block: Block): Promise<string[]> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'tablegate-docs-'));
  let db: TestDatabase | undefined;
  let gateway: TestGateway | undefined;
  const failures: string[] = [];
  try {
    const started = await gatewayFor(block, dir);
    db = started.db;
    gateway = started.gateway;
    const env = started.env;
    const host = new URL(gateway.url).host;
    /** The name of the first upload's file, for a later `<stored name>.ext` in a command. */
    let stored: string | undefined;
    for (const command of block.commands) {
      if (block.language === 'js') {
        const problems = await runJs(command, gateway.url, env);
        if (problems.length > 0)
          failures.push(`${block.page}:${command.line}:\n${problems.join('\n')}`);
        continue;
      }
      let text = command.text.replace(PAGE_HOSTS, host);
      if (stored) text = text.replace(/<stored name>\.\w+/g, stored);
      const assigned = /^([A-Z_]+)=\$\(/.exec(text)?.[1];
      const script = assigned ? `${text}\nprintf %s "$${assigned}"` : text;
      const outcome = await runBash(script, dir, env);
      if (assigned) env[assigned] = outcome.stdout;
      stored ??= /"accessURL":"[^"]*\/@\/([^"?]+)[?"]/.exec(outcome.stdout)?.[1];
      const problems = !assigned
        ? check(command, outcome, host)
        : outcome.exit !== 0 || outcome.stdout === '' || (outcome.status ?? 0) >= 300
          ? [`exit ${outcome.exit}, status ${outcome.status}, ${assigned} empty: ${outcome.stderr}`]
          : [];
      if (problems.length > 0) {
        failures.push(`${block.page}:${command.line}: ${command.text}\n${problems.join('\n')}`);
      }
    }
  } finally {
    await gateway?.close();
    await db?.drop();
    await rm(dir, { recursive: true, force: true });
  }
  return failures;
}

const blocks = PAGES.flatMap(blocksOf);

/** The blocks marked `<!-- example: from 01-example.sql -->`: a copy of part of it, as `page:line`. */
function copiesOf(page: string): { at: string; text: string }[] {
  const text = readFileSync(page, 'utf8');
  return [
    ...text.matchAll(/^<!-- example: from 01-example\.sql -->\n```\w*\n([\s\S]*?)^```$/gm),
  ].map((m) => ({ at: `${page}:${text.slice(0, m.index).split('\n').length}`, text: m[1] ?? '' }));
}

test("a block shown as the example shop's SQL is in docker/initdb/01-example.sql as shown", () => {
  const copies = PAGES.flatMap(copiesOf);
  expect(copies.length).toBeGreaterThan(0);
  expect(copies.filter((c) => !EXAMPLE_SQL.includes(c.text)).map((c) => c.at)).toEqual([]);
});

test('the pages have examples, and every one that is not run says why', () => {
  expect(blocks.filter((b) => b.notRun === null).length).toBeGreaterThan(10);
  const unexplained = blocks.filter((b) => b.notRun === '').map((b) => `${b.page}:${b.line}`);
  expect(unexplained).toEqual([]);
  const empty = blocks.filter((b) => b.notRun === null && b.commands.length === 0);
  expect(empty.map((b) => `${b.page}:${b.line}`)).toEqual([]);
});

describe.each(PAGES)('%s', (page) => {
  const runnable = blocks.filter((b) => b.page === page && b.notRun === null);
  if (runnable.length === 0) return;
  test.each(runnable.map((b) => [`line ${b.line} (${b.mode})`, b] as const))(
    'the example at %s answers what the page prints',
    async (_name, block) => {
      expect(await runBlock(block)).toEqual([]);
    },
  );
});
