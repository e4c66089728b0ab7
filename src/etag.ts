import { hash } from 'node:crypto';

/** A strong ETag: the SHA-1 of exactly the answer's bytes, so equal tags mean equal bodies. */
export function etagOf(body: string | Buffer): string {
  return `"${hash('sha1', body, 'base64url')}"`;
}
