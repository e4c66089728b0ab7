import { chmod, mkdir, mkdtemp, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { prepareDirectories } from '../../src/state-dir.js';

let root: string;
beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'tablegate-state-dir-'));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const modeOf = async (dir: string) => (await stat(dir)).mode & 0o777;

// The uploads mkdir once created ~/.tablegate first, with mode 0755.
test('the state directory is created 0700 before the uploads directory inside it', async () => {
  const stateDir = path.join(root, '.tablegate');
  await prepareDirectories({ stateDir, uploadsDir: path.join(stateDir, 'uploads') });
  expect(await modeOf(stateDir)).toBe(0o700);
  expect((await stat(path.join(stateDir, 'uploads'))).isDirectory()).toBe(true);
});

test('a state directory of ours that others may read is tightened to 0700', async () => {
  const stateDir = path.join(root, '.tablegate');
  await mkdir(stateDir);
  await chmod(stateDir, 0o755);
  await prepareDirectories({ stateDir, uploadsDir: path.join(stateDir, 'uploads') });
  expect(await modeOf(stateDir)).toBe(0o700);
});

test('uploads elsewhere: the state directory is not created at all', async () => {
  const stateDir = path.join(root, '.tablegate');
  const uploadsDir = path.join(root, 'files');
  await prepareDirectories({ stateDir, uploadsDir });
  await expect(stat(stateDir)).rejects.toThrow('ENOENT');
  expect((await stat(uploadsDir)).isDirectory()).toBe(true);
});
