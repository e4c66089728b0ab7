/**
 * Writing one request's uploads to disk: each file streams into a new name opened with O_EXCL
 * (`wx`, so nothing existing is ever overwritten), and the whole batch can be discarded — every
 * file of the request removed — when the request fails or the client goes away.
 */
import { open, unlink } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { fileTooLarge } from '../errors.js';
import { newStoredName } from './names.js';

/** The disk, not the client, failed (no space, no permission): a 500, logged with its cause. */
export class StorageError extends Error {
  override readonly name = 'StorageError';
  constructor(override readonly cause: unknown) {
    super(`cannot store an upload: ${(cause as Error)?.message ?? String(cause)}`);
  }
}

/** The batch was discarded (the client went away) before this file could start. */
export class UploadAbandoned extends Error {
  override readonly name = 'UploadAbandoned';
  constructor() {
    super('the upload was abandoned by the client');
  }
}

/** A busboy file stream: `limit` is emitted and `truncated` set when the size limit is passed. */
export type FileStream = Readable & { truncated?: boolean };

export interface StoredFile {
  readonly filename: string;
  readonly size: number;
}

/** Tries before giving up on EEXIST; with 128 random bits a second try is already unheard of. */
const NAME_ATTEMPTS = 3;

async function removeQuietly(file: string): Promise<void> {
  try {
    await unlink(file);
  } catch {
    // Already gone (ENOENT) or never created; nothing else can be done about it here.
  }
}

export class UploadBatch {
  private readonly written: string[] = [];
  private discarded = false;

  constructor(
    /** Absolute uploads directory. */
    readonly directory: string,
    readonly maxFileSize: number,
  ) {}

  /**
   * Streams one file part to a new file. Rejects with fileTooLarge as soon as the part passes
   * the limit, with StorageError when the disk fails, and with the stream's own error when the
   * body is malformed or the client went away.
   */
  async store(originalname: string, file: FileStream): Promise<StoredFile> {
    const { filename, target, handle } = await this.create(originalname);
    const out = handle.createWriteStream();
    // pipeline() passes one stream's error on to the other, so the disk is to blame only when
    // the file stream was still intact as the write stream failed. (The part may already have
    // been destroyed — body cut off, client gone — while the file was being opened.)
    let failed = null as 'body' | 'disk' | null;
    file.once('error', () => {
      failed ??= 'body';
    });
    out.once('error', () => {
      failed ??= file.destroyed ? 'body' : 'disk';
    });
    // Stop at the limit instead of reading the rest of an oversized part to the end.
    const onLimit = () => file.destroy(fileTooLarge(this.maxFileSize));
    file.once('limit', onLimit);
    // The limit may have been passed while the file was being opened.
    if (file.truncated) onLimit();
    try {
      await pipeline(file, out);
      if (file.truncated) throw fileTooLarge(this.maxFileSize);
    } catch (error) {
      if (failed === 'disk') throw new StorageError(error);
      throw error;
    } finally {
      file.off('limit', onLimit);
      // The batch may have been discarded (client gone) while this file was being written.
      if (this.discarded) await removeQuietly(target);
    }
    return { filename, size: out.bytesWritten };
  }

  /** Removes every file of the batch; files stored afterwards are removed as they finish. */
  async discard(): Promise<void> {
    this.discarded = true;
    const files = this.written.splice(0);
    await Promise.all(files.map(removeQuietly));
  }

  private async create(originalname: string) {
    for (let attempt = 1; ; attempt++) {
      const filename = newStoredName(originalname);
      const target = path.join(this.directory, filename);
      try {
        // Created before any byte is read, so a discard can never miss a file still opening.
        const handle = await open(target, 'wx');
        this.written.push(target);
        if (this.discarded) {
          await handle.close();
          await removeQuietly(target);
          throw new UploadAbandoned();
        }
        return { filename, target, handle };
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'EEXIST' && attempt < NAME_ATTEMPTS) continue;
        if (error instanceof UploadAbandoned) throw error;
        throw new StorageError(error);
      }
    }
  }
}
