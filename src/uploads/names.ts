/**
 * Stored file names: 128 random bits as 32 lowercase hex digits, plus the original extension when
 * it is a plain short one. The same pattern is the first gate on `GET /@/<filename>`: a name this
 * module could not have produced is never looked up on disk.
 */
import { randomBytes } from 'node:crypto';

/** What a stored name looks like; nothing else is ever served. */
export const STORED_NAME = /^[0-9a-f]{32}(?:\.[A-Za-z0-9]{1,10})?$/;

const PLAIN_EXTENSION = /^\.[A-Za-z0-9]{1,10}$/;

/**
 * The extension of a client-sent file name, kept only when it is plain (`.png`, `.PDF`); `.tar.gz`
 * keeps `.gz`; anything else (no dot, a leading-dot name, non-ASCII, over 10 characters) gives ''.
 * Both separators count, since browsers on Windows may send `C:\dir\name.ext`.
 */
export function plainExtension(originalname: string): string {
  const base = originalname.slice(
    Math.max(originalname.lastIndexOf('/'), originalname.lastIndexOf('\\')) + 1,
  );
  const dot = base.lastIndexOf('.');
  if (dot <= 0) return '';
  const extension = base.slice(dot);
  return PLAIN_EXTENSION.test(extension) ? extension : '';
}

/** A new name for an upload; `random` is replaceable only so tests can pin it. */
export function newStoredName(
  originalname: string,
  random: (size: number) => Buffer = randomBytes,
): string {
  return random(16).toString('hex') + plainExtension(originalname);
}

export function isStoredName(name: string): boolean {
  return STORED_NAME.test(name);
}
