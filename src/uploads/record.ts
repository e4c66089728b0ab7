/**
 * The file record `POST /upload` answers with (docs/uploads.md), and the base its `accessURL`
 * starts with: `--base-url`, or `http://<Host header>` when the header is a plain host[:port].
 * In auth mode the accessURL is a signed link (uploads/file-links.ts).
 */
import path from 'node:path';

export interface FileRecord {
  readonly fieldname: string;
  readonly originalname: string;
  readonly encoding: string;
  readonly mimetype: string;
  readonly destination: string;
  readonly filename: string;
  readonly path: string;
  readonly size: number;
  readonly accessURL: string;
}

export interface StoredUpload {
  readonly fieldname: string;
  readonly originalname: string;
  readonly encoding: string;
  readonly mimetype: string;
  /** Absolute uploads directory. */
  readonly destination: string;
  readonly filename: string;
  readonly size: number;
}

/**
 * The record, keys in the documented order (docs/uploads.md); `base` has no trailing slash.
 * `link` is what the accessURL ends with after the name: a signed link's query
 * (uploads/file-links.ts), or nothing.
 */
export function fileRecord(upload: StoredUpload, base: string, link = ''): FileRecord {
  return {
    fieldname: upload.fieldname,
    originalname: upload.originalname,
    encoding: upload.encoding,
    mimetype: upload.mimetype,
    destination: upload.destination,
    filename: upload.filename,
    path: path.join(upload.destination, upload.filename),
    size: upload.size,
    accessURL: `${base}/@/${upload.filename}${link}`,
  };
}

/**
 * A DNS name or IPv4 address (letters, digits, `-`, `_`, `.`) or a bracketed IPv6 literal, with
 * an optional port. Anything else in a Host header (paths, `@`, spaces, quotes) could make the
 * URL point somewhere else, so it is refused rather than pasted.
 */
const PLAIN_HOST =
  /^(?:[A-Za-z0-9_](?:[A-Za-z0-9_.-]{0,252})|\[[0-9A-Fa-f:.]{2,45}\])(?::\d{1,5})?$/;

/**
 * What accessURL starts with: the configured base URL (trailing slashes dropped), else
 * `http://<host>`; null when there is no base URL and the Host header is missing or not plain.
 */
export function accessBase(baseUrl: string | null, hostHeader: string | undefined): string | null {
  if (baseUrl !== null) return baseUrl.replace(/\/+$/, '');
  if (hostHeader === undefined || !PLAIN_HOST.test(hostHeader)) return null;
  return `http://${hostHeader}`;
}
