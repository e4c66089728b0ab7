/**
 * The Dockerfile read as data, for the packaging tests: its stages and instructions (parsed by
 * dockerfile-ast, the parser of the VS Code Docker tools), so the tests check and reproduce what
 * the image really does instead of a copy of it.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { DockerfileParser, type Instruction } from 'dockerfile-ast';

export const REPO = path.resolve('.');
export const DOCKERFILE_TEXT = readFileSync(path.join(REPO, 'Dockerfile'), 'utf8');

export interface Step {
  readonly keyword: string;
  /** The arguments after the flags, as written (continuation lines joined). */
  readonly args: string;
  readonly flags: readonly string[];
}

export interface Stage {
  readonly name: string | undefined;
  /** The image after ARG defaults are applied (`node:22-bookworm-slim`). */
  readonly image: string;
  readonly steps: readonly Step[];
}

function step(instruction: Instruction): Step {
  const flags = (instruction as { getFlags?: () => { toString(): string }[] }).getFlags?.() ?? [];
  return {
    keyword: instruction.getKeyword(),
    args: (instruction.getArgumentsContent() ?? '').replace(/\s+/g, ' ').trim(),
    flags: flags.map((flag) => flag.toString()),
  };
}

function parseStages(): Stage[] {
  const dockerfile = DockerfileParser.parse(DOCKERFILE_TEXT);
  const defaults = new Map<string, string>();
  for (const arg of dockerfile.getInitialARGs()) {
    const property = arg.getProperty();
    const value = property?.getValue();
    if (property && value) defaults.set(property.getName(), value);
  }
  const stages: { name: string | undefined; image: string; steps: Step[] }[] = [];
  for (const instruction of dockerfile.getInstructions()) {
    if (instruction.getKeyword() === 'FROM') {
      const from = dockerfile
        .getFROMs()
        .find((f) => f.getRange().start.line === instruction.getRange().start.line);
      const image = (from?.getImage() ?? '').replace(
        /\$\{(\w+)\}|\$(\w+)/g,
        (_, braced: string | undefined, bare: string | undefined) =>
          defaults.get(braced ?? bare ?? '') ?? '',
      );
      stages.push({ name: from?.getBuildStage() ?? undefined, image, steps: [] });
    } else {
      stages.at(-1)?.steps.push(step(instruction));
    }
  }
  return stages;
}

export const STAGES: readonly Stage[] = parseStages();

/** The stage the image is made of: the last one. */
export function runStage(): Stage {
  const last = STAGES.at(-1);
  if (!last) throw new Error('the Dockerfile has no FROM');
  return last;
}

export function stepsOf(stage: Stage, keyword: string): Step[] {
  return stage.steps.filter((s) => s.keyword === keyword);
}

/** An exec-form (JSON array) argument list: `["a", "b"]` → ['a', 'b']. */
export function execForm(args: string): string[] {
  const parsed: unknown = JSON.parse(args);
  if (!Array.isArray(parsed) || !parsed.every((a) => typeof a === 'string')) {
    throw new Error(`not an exec-form array: ${args}`);
  }
  return parsed;
}

/** `ENV A=1 B=2` lines of a stage, in order. */
export function envOf(stage: Stage): Record<string, string> {
  const env: Record<string, string> = {};
  for (const { args } of stepsOf(stage, 'ENV')) {
    for (const pair of args.split(' ')) {
      const [key, ...value] = pair.split('=');
      if (key) env[key] = value.join('=').replace(/^"(.*)"$/, '$1');
    }
  }
  return env;
}

/** The run stage's `npm ci …` command, as an argv. */
export function productionInstall(): string[] {
  const install = stepsOf(runStage(), 'RUN').find((s) => s.args.startsWith('npm ci'));
  if (!install) throw new Error('the run stage has no `RUN npm ci`');
  return (install.args.split('&&')[0] ?? '').trim().split(' ');
}
