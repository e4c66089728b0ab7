/**
 * The state directory (`~/.tablegate`): it holds the generated JWT secret and, by default, the
 * uploads, so it is made private (0700) before anything is created inside it — the uploads
 * mkdir used to create it first with the default 0755.
 */
import { chmod, mkdir, stat } from 'node:fs/promises';
import path from 'node:path';

export const PRIVATE_MODE = 0o700;

function isInside(child: string, parent: string): boolean {
  const relative = path.relative(parent, child);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
}

/**
 * Creates `stateDir` 0700 when it is missing; one of ours that others may read is tightened to
 * 0700. A directory of another owner, or on a read-only file system, is left as it is.
 */
export async function preparePrivateDirectory(stateDir: string): Promise<void> {
  await mkdir(stateDir, { recursive: true, mode: PRIVATE_MODE });
  const info = await stat(stateDir);
  if ((info.mode & 0o077) !== 0 && info.uid === process.getuid?.()) {
    await chmod(stateDir, PRIVATE_MODE).catch(() => {});
  }
}

/** The directories the gateway writes to: the state directory first when uploads go inside it. */
export async function prepareDirectories(config: {
  readonly stateDir: string;
  readonly uploadsDir: string;
}): Promise<void> {
  if (isInside(config.uploadsDir, config.stateDir)) await preparePrivateDirectory(config.stateDir);
  await mkdir(config.uploadsDir, { recursive: true });
}
