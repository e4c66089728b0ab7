/**
 * The two commands at the top of README.md are what a newcomer types first: the one that starts
 * the demo must name only npm scripts that exist, and must not go through `npx`, which installs
 * the working copy as a package (and builds it again) before it runs the demo.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '../../..');
const readme = readFileSync(path.join(root, 'README.md'), 'utf8');
const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as {
  scripts: Record<string, string>;
};

/** The command lines (not comments) of README's first ```sh block. */
function firstCommands(): string[] {
  const block = /```sh\n([\s\S]*?)```/.exec(readme);
  if (!block) throw new Error('README.md has no ```sh block');
  return (block[1] ?? '')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
}

test('the first command installs and starts the demo through an npm script that exists', () => {
  const [start] = firstCommands();
  expect(start).toBe('npm ci && npm run demo');
  expect(pkg.scripts.demo).toBe('node dist/cli.js demo');
});

test('the second command runs the tests', () => {
  expect(firstCommands()[1]).toBe('npm test');
  expect(pkg.scripts.test).toBeDefined();
});
