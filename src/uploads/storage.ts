/**
 * Where uploads are kept, behind a small interface as the login counters are
 * (throttle/counter-store.ts): a batch of one request's files (stored as they stream in,
 * discarded together: store.ts), and a stored file looked up by name. DiskStorage keeps them in
 * one directory, which is also where downloads are served from (http/files.ts hands the name to
 * @fastify/static for Range, ETag and conditional requests), so another storage is a file system
 * too: a local disk, or a volume several gateways share.
 */
import { lstat } from 'node:fs/promises';
import path from 'node:path';
import { type FileStream, type StoredFile, UploadBatch } from './store.js';

/** One request's files: each stored as it streams in, all removed when the request fails. */
export interface FileBatch {
  store(originalname: string, file: FileStream): Promise<StoredFile>;
  discard(): Promise<void>;
}

export interface UploadStorage {
  /** The absolute directory of the stored files: the file records' `destination`. */
  readonly directory: string;
  batch(maxFileSize: number): FileBatch;
  /** A stored file's size, or null when there is no regular file by that name (a symlink is none). */
  stat(name: string): Promise<{ readonly size: number } | null>;
}

export class DiskStorage implements UploadStorage {
  readonly directory: string;

  constructor(directory: string) {
    this.directory = path.resolve(directory);
  }

  batch(maxFileSize: number): FileBatch {
    return new UploadBatch(this.directory, maxFileSize);
  }

  async stat(name: string): Promise<{ readonly size: number } | null> {
    try {
      const found = await lstat(path.join(this.directory, name));
      return found.isFile() ? { size: found.size } : null;
    } catch {
      return null;
    }
  }
}
