/**
 * Turns `$filter` text into tokens with 1-based character positions (Unicode code points), and
 * parses a single literal token for `update(<key>,<value>)` / `delete(<key>,<value>)` with the
 * same string and number rules. The lexer never throws: a character it cannot read becomes an
 * `invalid` token, and the parser reports it with what it expected at that place.
 */
import { invalidQuery } from '../errors.js';
import type { Literal, TemporalLiteral } from './ast.js';
import { scanTemporal } from './temporal.js';

export type Token =
  | { readonly kind: 'word'; readonly text: string; readonly position: number }
  /** `text` is the source with its quotes; `value` the string it denotes. */
  | {
      readonly kind: 'string';
      readonly text: string;
      readonly value: string;
      readonly position: number;
    }
  | { readonly kind: 'number'; readonly text: string; readonly position: number }
  /** An unquoted date, datetime or time of day (temporal.ts), already checked and normalised. */
  | {
      readonly kind: 'temporal';
      readonly text: string;
      readonly literal: TemporalLiteral;
      readonly position: number;
    }
  | {
      readonly kind: 'lparen' | 'rparen' | 'comma';
      readonly text: string;
      readonly position: number;
    }
  /** Something no rule accepts; `problem` says what, e.g. `an unterminated string`. */
  | { readonly kind: 'invalid'; readonly problem: string; readonly position: number }
  | { readonly kind: 'end'; readonly position: number };

// Whitespace between tokens. `+` in a query string already arrived here as a space.
const WHITESPACE = new Set([' ', '\t', '\r', '\n']);

// An identifier (column name) character: ASCII letters and digits, `_`, `$`, and any Unicode
// letter, mark or digit, so names like `größe` or `名前` work unquoted. A column whose name holds
// anything else (spaces, `-`, `.`, quotes, emoji…) cannot be named in a filter.
const IDENT_CHAR = /^[\p{L}\p{M}\p{N}_$]$/u;

const isDigit = (c: string | undefined): boolean => c !== undefined && c >= '0' && c <= '9';
const isIdentChar = (c: string | undefined): boolean => c !== undefined && IDENT_CHAR.test(c);
export const isWhitespace = (c: string | undefined): boolean =>
  c !== undefined && WHITESPACE.has(c);

/**
 * The lower-case form of a word if it is plain ASCII, else null. Keywords are matched only
 * through this, so no non-ASCII character can lower-case into a keyword (U+212A KELVIN SIGN → k).
 */
export function asciiKeyword(text: string): string | null {
  return /^[A-Za-z]+$/.test(text) ? text.toLowerCase() : null;
}

/** True for a non-empty text of ASCII digits only (`007` too). */
export function isDigitRun(text: string): boolean {
  if (text.length === 0) return false;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 48 || code > 57) return false;
  }
  return true;
}

/** End index of `-?digits(.digits)?([eE][+-]?digits)?` starting at `i`, or -1 if none starts there. */
function scanNumber(chars: readonly string[], i: number): number {
  let j = i;
  if (chars[j] === '-') j++;
  if (!isDigit(chars[j])) return -1;
  while (isDigit(chars[j])) j++;
  if (chars[j] === '.' && isDigit(chars[j + 1])) {
    j++;
    while (isDigit(chars[j])) j++;
  }
  if (chars[j] === 'e' || chars[j] === 'E') {
    let k = j + 1;
    if (chars[k] === '+' || chars[k] === '-') k++;
    if (isDigit(chars[k])) {
      while (isDigit(chars[k])) k++;
      j = k;
    }
  }
  return j;
}

/** `chars[i]` is `'`. Returns the end index (after the closing quote) and the value, or null if unterminated. */
function scanString(chars: readonly string[], i: number): { end: number; value: string } | null {
  const value: string[] = [];
  let j = i + 1;
  while (j < chars.length) {
    const c = chars[j] as string;
    if (c === "'") {
      if (chars[j + 1] !== "'") return { end: j + 1, value: value.join('') };
      value.push("'");
      j += 2;
    } else {
      value.push(c);
      j++;
    }
  }
  return null;
}

function scanWord(chars: readonly string[], i: number): number {
  let j = i;
  while (isIdentChar(chars[j])) j++;
  return j;
}

/** Shortens a piece of source text for an error message. */
export function excerpt(text: string, max = 40): string {
  const chars = Array.from(text);
  return chars.length <= max ? text : `${chars.slice(0, max).join('')}…`;
}

/**
 * Splits filter text into tokens. The last token is always `end` (or `invalid` followed by
 * `end`: lexing stops at the first invalid token, since the parser cannot get past it).
 */
export function tokenize(text: string): Token[] {
  const chars = Array.from(text);
  const tokens: Token[] = [];
  let i = 0;
  while (i < chars.length) {
    const c = chars[i] as string;
    const position = i + 1;
    if (WHITESPACE.has(c)) {
      i++;
    } else if (c === '(' || c === ')' || c === ',') {
      const kind = c === '(' ? 'lparen' : c === ')' ? 'rparen' : 'comma';
      tokens.push({ kind, text: c, position });
      i++;
    } else if (c === "'") {
      const scanned = scanString(chars, i);
      if (scanned === null) {
        tokens.push({ kind: 'invalid', problem: 'an unterminated string', position });
        break;
      }
      const source = chars.slice(i, scanned.end).join('');
      tokens.push({ kind: 'string', text: source, value: scanned.value, position });
      i = scanned.end;
    } else if (c === '-' || isDigit(c)) {
      const temporal = isDigit(c) ? scanTemporal(chars, i) : null;
      if (temporal !== null) {
        if ('problem' in temporal) {
          tokens.push({ kind: 'invalid', problem: temporal.problem, position });
          break;
        }
        const { literal } = temporal;
        tokens.push({ kind: 'temporal', text: literal.text, literal, position });
        i = temporal.end;
        continue;
      }
      const end = scanNumber(chars, i);
      if (end !== -1 && !isIdentChar(chars[end])) {
        tokens.push({ kind: 'number', text: chars.slice(i, end).join(''), position });
        i = end;
        continue;
      }
      // A name may start with a digit (`2fa_enabled`): a number run straight into letters is a
      // word when the whole run is identifier characters, else a malformed number (`1.5abc`).
      const wordEnd = isDigit(c) ? scanWord(chars, i) : i;
      if (end !== -1 && wordEnd >= end) {
        tokens.push({ kind: 'word', text: chars.slice(i, wordEnd).join(''), position });
        i = wordEnd;
        continue;
      }
      if (end === -1) {
        tokens.push({ kind: 'invalid', problem: `unexpected character '${c}'`, position });
      } else {
        const bad = chars.slice(i, scanWord(chars, end)).join('');
        tokens.push({ kind: 'invalid', problem: `a malformed number '${excerpt(bad)}'`, position });
      }
      break;
    } else if (isIdentChar(c)) {
      const end = scanWord(chars, i);
      tokens.push({ kind: 'word', text: chars.slice(i, end).join(''), position });
      i = end;
    } else {
      tokens.push({ kind: 'invalid', problem: `unexpected character '${c}'`, position });
      break;
    }
  }
  tokens.push({ kind: 'end', position: chars.length + 1 });
  return tokens;
}

/** `true`, `false` or `null` (any case) as a literal, else null. */
export function keywordLiteral(text: string): Literal | null {
  switch (asciiKeyword(text)) {
    case 'true':
      return { kind: 'boolean', value: true };
    case 'false':
      return { kind: 'boolean', value: false };
    case 'null':
      return { kind: 'null' };
    default:
      return null;
  }
}

/**
 * Parses the `<value>` of `update(<key>,<value>)` / `delete(<key>,<value>)`. Surrounding spaces
 * are ignored. A single-quoted string follows the filter's string rules (`''` is a quote); a bare
 * token is a number if it is exactly one, `true`/`false`/`null` in any case, else a string as
 * written. Throws `invalidQuery` for an empty value or a malformed quoted string.
 */
export function parseLiteral(text: string): Literal {
  // The common key, an id: nothing to trim, and every digit run is a number (issue 17).
  if (isDigitRun(text)) return { kind: 'number', text };
  const chars = Array.from(text);
  let start = 0;
  let end = chars.length;
  while (start < end && isWhitespace(chars[start])) start++;
  while (end > start && isWhitespace(chars[end - 1])) end--;
  const token = chars.slice(start, end);
  if (token.length === 0) {
    throw invalidQuery("The key value is empty; write '' for an empty string");
  }
  if (token[0] === "'") {
    const scanned = scanString(token, 0);
    if (scanned === null) {
      throw invalidQuery(
        `Invalid key value ${excerpt(token.join(''))}: the string has no closing quote (write '' for a quote inside it)`,
      );
    }
    if (scanned.end !== token.length) {
      throw invalidQuery(
        `Invalid key value ${excerpt(token.join(''))}: unexpected text after the closing quote at position ${start + scanned.end + 1} (write '' for a quote inside a string)`,
      );
    }
    return { kind: 'string', value: scanned.value };
  }
  const bare = token.join('');
  if (scanNumber(token, 0) === token.length) return { kind: 'number', text: bare };
  return keywordLiteral(bare) ?? { kind: 'string', value: bare };
}
