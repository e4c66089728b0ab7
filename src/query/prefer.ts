/**
 * The `Prefer` request header (RFC 7240) → the preferences the write routes honour:
 * `return=representation`, `resolution=merge-duplicates|ignore-duplicates` and `max-affected=<n>`
 * (docs/writes.md). Anything else — another preference, another value, parameters after `;` — is
 * ignored, as RFC 7240 §2 asks of a server that does not support it; only a malformed
 * `max-affected` is refused, since ignoring it would change every row the request matches. The
 * first instance of a preference counts (RFC 7240 §2). Checks text only.
 */
import { invalidPreference } from '../errors.js';
import { excerpt } from './lexer.js';

export type Resolution = 'merge-duplicates' | 'ignore-duplicates';

export interface Preferences {
  /** `return=representation`: the written rows in the answer. */
  readonly representation: boolean;
  /** `resolution=…`: what a create does with a row whose primary or unique key exists. */
  readonly resolution: Resolution | null;
  /** `max-affected=<n>`: an update or delete that would change more rows changes none. */
  readonly maxAffected: number | null;
}

export const NO_PREFERENCES: Preferences = {
  representation: false,
  resolution: null,
  maxAffected: null,
};

/** The preferences of the header (a repeated header arrives joined by `, ` or as an array). */
export function parsePrefer(header: string | readonly string[] | undefined): Preferences {
  if (header === undefined) return NO_PREFERENCES;
  const text = typeof header === 'string' ? header : header.join(',');
  let representation: boolean | null = null;
  let resolution: Resolution | null | undefined;
  let maxAffected: number | null | undefined;
  for (const { name, value } of preferencesOf(text)) {
    switch (name) {
      case 'return':
        representation ??= value === 'representation';
        break;
      case 'resolution':
        if (resolution === undefined) {
          resolution = value === 'merge-duplicates' || value === 'ignore-duplicates' ? value : null;
        }
        break;
      case 'max-affected':
        if (maxAffected === undefined) maxAffected = maxAffectedOf(value);
        break;
    }
  }
  if (representation === null && resolution === undefined && maxAffected === undefined) {
    return NO_PREFERENCES;
  }
  return {
    representation: representation ?? false,
    resolution: resolution ?? null,
    maxAffected: maxAffected ?? null,
  };
}

function maxAffectedOf(value: string | null): number {
  const count = value === null || !/^[0-9]{1,15}$/.test(value) ? Number.NaN : Number(value);
  if (!Number.isSafeInteger(count)) {
    throw invalidPreference(
      `Prefer: max-affected must be a non-negative integer, got '${excerpt(value ?? '')}'`,
    );
  }
  return count;
}

/** `Preference-Applied`: the honoured preferences as the request gave them; '' for none. */
export function appliedPreferences(preferences: Preferences, applied: AppliedPreferences): string {
  if (preferences === NO_PREFERENCES) return '';
  const words: string[] = [];
  if (applied.representation) words.push('return=representation');
  if (applied.resolution && preferences.resolution !== null) {
    words.push(`resolution=${preferences.resolution}`);
  }
  if (applied.maxAffected && preferences.maxAffected !== null) {
    words.push(`max-affected=${preferences.maxAffected}`);
  }
  return words.join(', ');
}

/** Which of the request's preferences a write honoured (each is echoed in Preference-Applied). */
export interface AppliedPreferences {
  readonly representation: boolean;
  readonly resolution: boolean;
  readonly maxAffected: boolean;
}

interface Preference {
  readonly name: string;
  readonly value: string | null;
}

/**
 * `token [ "=" word ] *( ";" parameter )`, comma-separated (RFC 7240 §2, `word` a token or a
 * quoted string); names lower-cased (they are case-insensitive), parameters dropped.
 */
function preferencesOf(text: string): Preference[] {
  const found: Preference[] = [];
  let i = 0;
  while (i < text.length) {
    let end = i;
    let quoted = false;
    while (end < text.length && (quoted || text[end] !== ',')) {
      if (text[end] === '"') quoted = !quoted;
      else if (text[end] === '\\' && quoted) end++;
      end++;
    }
    const item = text.slice(i, end);
    i = end + 1;
    const head = item.split(';', 1)[0] as string;
    const equals = head.indexOf('=');
    const name = (equals === -1 ? head : head.slice(0, equals)).trim().toLowerCase();
    if (name === '') continue;
    found.push({ name, value: equals === -1 ? null : wordOf(head.slice(equals + 1).trim()) });
  }
  return found;
}

/** A token as it is, a quoted string without its quotes and escapes. */
function wordOf(text: string): string {
  if (!text.startsWith('"') || text.length < 2 || !text.endsWith('"')) return text;
  return text.slice(1, -1).replace(/\\(.)/g, '$1');
}
