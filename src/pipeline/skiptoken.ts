/**
 * `$skiptoken`: where the next page of a read starts (docs/paging.md), as an
 * opaque text the gateway alone can make and read. It holds the position — the sort keys' values
 * of the last row of the page before (sql/compile-seek.ts keeps them exactly), and a count of rows
 * to skip after it — encrypted and authenticated with AES-256-GCM, and it is bound to the read it
 * continues: the table, `$filter`, `$orderby`, `$select`, `$expand` and the sort keys' types are
 * the cipher's additional data, so a token edited, cut short, or used with any of them changed
 * does not open (400 BAD_SKIPTOKEN). Encrypted, not only signed: the primary key that breaks ties
 * may be a column the caller's role cannot see.
 *
 * The cipher keeps the length of what it seals, so the position is padded (with spaces, which
 * JSON.parse skips) to POSITION_BYTES, or for a longer one (long string keys) to the next power of
 * two: a token's length says nothing about the values in it (docs/paging.md), and tokens made
 * before the padding still open.
 *
 * The IV is an HMAC of the bound read and the position (a synthetic IV, as in AES-SIV): the same
 * position of the same read gives the same token, and two different ones never share an IV
 * however many tokens a long-lived key makes (a random 96-bit IV is good for about 2^32).
 *
 * The key is derived from a secret every gateway of a deployment shares, so a token outlives a
 * restart and works on any gateway behind a load balancer: `--skiptoken-secret`, else the JWT
 * secret (`--jwt-secret`, or the one generated once into the state directory), also in open mode.
 */
import {
  createCipheriv,
  createDecipheriv,
  createHmac,
  createSecretKey,
  type KeyObject,
  randomBytes,
} from 'node:crypto';
import { createLRU } from 'lru.min';
import { loadJwtSecret, MIN_SECRET_BYTES } from '../auth/tokens.js';
import { badSkiptoken } from '../errors.js';
import { SEALED_TOKENS, SEALED_TOKENS_MAX_KEY_CHARS } from '../limits.js';
import type { QueryObject } from '../query/options.js';
import type { SeekValue } from '../sql/compile-seek.js';

/** Where a page starts. */
export interface Position {
  /** Rows to skip after the position (from the start, when pages follow by count). */
  readonly skip: number;
  /** The sort keys' values of the row the page starts after; null when pages follow by count. */
  readonly after: readonly SeekValue[] | null;
}

const VERSION = 1;
const IV_BYTES = 12;
const TAG_BYTES = 16;
/**
 * The bytes every position is padded to: room for a count and a few sort keys of any type
 * (`[0,["2038-01-19 03:14:07.000001","18446744073709551615"]]` is 56), so nearly every read's
 * tokens are one length, 210 characters.
 */
export const POSITION_BYTES = 128;
/** Version, IV, at least the shortest payload (`[0]`, as unpadded tokens hold), tag. */
const MIN_TOKEN_BYTES = 1 + IV_BYTES + 3 + TAG_BYTES;
const BASE64URL = /^[A-Za-z0-9_-]+$/;

/** The read options a token is bound to. */
const BOUND_OPTIONS = ['$filter', '$orderby', '$select', '$expand'] as const;

/**
 * What a token is bound to, as one text: the table's name, each bound option (absent and empty
 * told apart, each piece prefixed by its length so no two reads give the same text) and the
 * signature of the read's sort keys.
 */
export function bindingOf(table: string, query: QueryObject, signature: string): string {
  let text = `${table.length}:${table}`;
  for (const option of BOUND_OPTIONS) {
    const raw = query[option];
    const value = typeof raw === 'string' || raw === undefined ? raw : raw[0];
    text += value === undefined ? '|-' : `|${value.length}:${value}`;
  }
  return `${text}|${signature.length}:${signature}`;
}

export class Skiptokens {
  private readonly cipherKey: KeyObject;
  private readonly ivKey: KeyObject;
  /**
   * Tokens of pages read without a token, by binding and position: such reads repeat (a list
   * polled, pages by `$skip`) and their Link is the same every time (the IV is synthetic), so
   * the cipher runs once (a few per cent of such a read). A walk's pages seldom repeat: not kept.
   */
  private readonly sealed = createLRU<string, string>({ max: SEALED_TOKENS });

  /** Keys of their own, derived from `secret`: never the JWT key itself. */
  constructor(secret: string) {
    if (Buffer.byteLength(secret, 'utf8') < MIN_SECRET_BYTES) {
      throw new Error(`the $skiptoken secret must be at least ${MIN_SECRET_BYTES} bytes`);
    }
    const derive = (purpose: string) =>
      createSecretKey(createHmac('sha256', secret).update(purpose).digest());
    this.cipherKey = derive('tablegate $skiptoken cipher');
    this.ivKey = derive('tablegate $skiptoken iv');
  }

  /** `--skiptoken-secret`, else the JWT secret of auth mode or of the state directory. */
  static async open(config: {
    readonly mode: 'auth' | 'open';
    readonly jwtSecret: string | null;
    readonly skiptokenSecret: string | null;
    readonly stateDir: string;
  }): Promise<Skiptokens> {
    const secret =
      config.skiptokenSecret ??
      (await loadJwtSecret(config.mode === 'auth' ? config.jwtSecret : null, config.stateDir));
    return new Skiptokens(secret);
  }

  /** A key of this process alone: links that work until it stops. */
  static ofThisProcess(): Skiptokens {
    return new Skiptokens(randomBytes(MIN_SECRET_BYTES).toString('base64url'));
  }

  /** The token of `position` in the read `binding` names; `keep` it for the next time. */
  seal(binding: string, position: Position, keep = false): string {
    const text = JSON.stringify(
      position.after === null ? [position.skip] : [position.skip, position.after],
    );
    const key = keep ? `${binding.length}:${binding}${text}` : '';
    if (key.length > SEALED_TOKENS_MAX_KEY_CHARS) return this.sealOnce(binding, text);
    const known = keep ? this.sealed.get(key) : undefined;
    if (known !== undefined) return known;
    const token = this.sealOnce(binding, text);
    if (keep) this.sealed.set(key, token);
    return token;
  }

  private sealOnce(binding: string, text: string): string {
    const payload = padded(text);
    const aad = Buffer.from(binding);
    const iv = createHmac('sha256', this.ivKey)
      .update(aad)
      .update(payload)
      .digest()
      .subarray(0, IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.cipherKey, iv);
    cipher.setAAD(aad);
    const body = Buffer.concat([cipher.update(payload), cipher.final()]);
    return Buffer.concat([Buffer.of(VERSION), iv, body, cipher.getAuthTag()]).toString('base64url');
  }

  /** The position a token holds, when it was sealed for this very `binding`; else BAD_SKIPTOKEN. */
  open(binding: string, token: string): Position {
    if (!BASE64URL.test(token)) throw badSkiptoken();
    const bytes = Buffer.from(token, 'base64url');
    // Only the text seal() writes: a last character changed only in bits base64 leaves unused
    // would otherwise decode to the same bytes.
    if (bytes.length < MIN_TOKEN_BYTES || bytes[0] !== VERSION) throw badSkiptoken();
    if (bytes.toString('base64url') !== token) throw badSkiptoken();
    let payload: string;
    try {
      const decipher = createDecipheriv(
        'aes-256-gcm',
        this.cipherKey,
        bytes.subarray(1, 1 + IV_BYTES),
        { authTagLength: TAG_BYTES },
      );
      decipher.setAAD(Buffer.from(binding));
      decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
      payload = Buffer.concat([
        decipher.update(bytes.subarray(1 + IV_BYTES, bytes.length - TAG_BYTES)),
        decipher.final(),
      ]).toString('utf8');
    } catch {
      throw badSkiptoken();
    }
    return positionOf(payload);
  }
}

/** `text` followed by spaces up to POSITION_BYTES, or to the next power of two above it. */
function padded(text: string): Buffer {
  const length = Buffer.byteLength(text, 'utf8');
  let size = POSITION_BYTES;
  while (size < length) size *= 2;
  const payload = Buffer.alloc(size, ' ');
  payload.write(text, 'utf8');
  return payload;
}

/** The payload `[skip]` or `[skip, [value, …]]`: authentic, so only a bug could break its shape. */
function positionOf(payload: string): Position {
  const parsed: unknown = JSON.parse(payload);
  if (!Array.isArray(parsed) || parsed.length < 1 || parsed.length > 2) throw badSkiptoken();
  const [skip, after] = parsed as [unknown, unknown];
  if (!Number.isSafeInteger(skip) || (skip as number) < 0) throw badSkiptoken();
  if (parsed.length === 1) return { skip: skip as number, after: null };
  const values = Array.isArray(after) ? after : null;
  const valid = (value: unknown) =>
    value === null || typeof value === 'string' || typeof value === 'number';
  if (values === null || !values.every(valid)) throw badSkiptoken();
  return { skip: skip as number, after: values as SeekValue[] };
}
