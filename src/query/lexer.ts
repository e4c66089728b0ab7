/**
 * The one lexer of the query language: `$filter` text (and the names and paths of `$select`,
 * `$orderby`, `$expand` and `$apply`) into tokens with 1-based character positions (Unicode code
 * points), each with its UTF-16 start and end offsets (the read-shape cache finds its integer
 * holes through them). It also parses a single literal for `update(<key>,<value>)` with the same
 * string and number rules. The lexer never throws: a character it cannot read becomes an
 * `invalid` token, and the parser reports it with what it expected at that place.
 */
import { invalidQuery } from '../errors.js';
import type { Literal, TemporalLiteral, UserField } from './ast.js';
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
  /** A column name in double quotes (`"zip code"`): never a keyword; `value` is the name. */
  | {
      readonly kind: 'name';
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
  /** `@user.id`, `@user.email`, `@user.role`: only in a policy's where (LexOptions.parameters). */
  | {
      readonly kind: 'parameter';
      readonly text: string;
      readonly field: UserField;
      readonly position: number;
    }
  | {
      readonly kind: 'lparen' | 'rparen' | 'comma' | 'slash' | 'colon';
      readonly text: string;
      readonly position: number;
    }
  /**
   * Something no rule accepts; `problem` says what, e.g. `an unterminated string`. A `fatal`
   * problem is the whole message: the parser reports it as it is.
   */
  | {
      readonly kind: 'invalid';
      readonly problem: string;
      readonly position: number;
      readonly fatal?: boolean;
    }
  | { readonly kind: 'end'; readonly position: number };

export interface LexOptions {
  /** Read `@user.<field>` as a parameter (a policy's where); otherwise `@` is not allowed. */
  readonly parameters?: boolean;
  /** `$apply`: a `/` after `)` separates two steps (`filter(…)/groupby(…)`), spaces allowed. */
  readonly steps?: boolean;
}

/** Tokens, and where each one starts and ends in the text (UTF-16 offsets, end exclusive). */
export interface Lexed {
  readonly tokens: readonly Token[];
  readonly starts: readonly number[];
  readonly ends: readonly number[];
}

const USER_PARAMETER = /^@user\.(id|email|role)/;

// Whitespace between tokens. `+` in a query string already arrived here as a space.
export const isWhitespace = (c: string | undefined): boolean =>
  c === ' ' || c === '\t' || c === '\r' || c === '\n';

const isDigit = (c: string | undefined): boolean => c !== undefined && c >= '0' && c <= '9';

// An identifier (column name) character: ASCII letters and digits, `_`, `$`, and any Unicode
// letter, mark or digit, so names like `größe` or `名前` work unquoted. A column whose name holds
// anything else (spaces, `-`, `.`, quotes, emoji…) is written in double quotes.
const IDENT_CHAR = /^[\p{L}\p{M}\p{N}_$]$/u;

/** The code units of the identifier character at `i`, or 0 when there is none. */
function identCharWidth(text: string, i: number): number {
  const code = text.charCodeAt(i);
  if (Number.isNaN(code)) return 0;
  if (code < 128) {
    const ascii =
      (code >= 97 && code <= 122) ||
      (code >= 65 && code <= 90) ||
      (code >= 48 && code <= 57) ||
      code === 95 ||
      code === 36;
    return ascii ? 1 : 0;
  }
  const point = text.codePointAt(i) as number;
  const width = point > 0xffff ? 2 : 1;
  return IDENT_CHAR.test(String.fromCodePoint(point)) ? width : 0;
}

/** The character (code point) at `i` as a string. */
function charAt(text: string, i: number): string {
  const point = text.codePointAt(i);
  return point === undefined ? '' : String.fromCodePoint(point);
}

/** Characters (code points) in `text` from `start` to `end`. */
function codePoints(text: string, start: number, end: number): number {
  let count = 0;
  for (let k = start; k < end; k++) {
    const code = text.charCodeAt(k);
    // A low surrogate right after a high one is the second half of one character.
    if (code >= 0xdc00 && code <= 0xdfff && k > start) {
      const before = text.charCodeAt(k - 1);
      if (before >= 0xd800 && before <= 0xdbff) continue;
    }
    count++;
  }
  return count;
}

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

/** End of `-?digits(.digits)?([eE][+-]?digits)?` starting at `i`, or -1 if none starts there. */
function scanNumber(text: string, i: number): number {
  let j = i;
  if (text[j] === '-') j++;
  if (!isDigit(text[j])) return -1;
  while (isDigit(text[j])) j++;
  if (text[j] === '.' && isDigit(text[j + 1])) {
    j++;
    while (isDigit(text[j])) j++;
  }
  if (text[j] === 'e' || text[j] === 'E') {
    let k = j + 1;
    if (text[k] === '+' || text[k] === '-') k++;
    if (isDigit(text[k])) {
      while (isDigit(text[k])) k++;
      j = k;
    }
  }
  return j;
}

/**
 * `text[i]` is the quote `'` or `"`. The end (after the closing quote) and the value, a doubled
 * quote standing for one; null if unterminated.
 */
export function scanQuoted(text: string, i: number): { end: number; value: string } | null {
  const quote = text[i] as string;
  let value = '';
  let from = i + 1;
  for (;;) {
    const at = text.indexOf(quote, from);
    if (at === -1) return null;
    value += text.slice(from, at);
    if (text[at + 1] !== quote) return { end: at + 1, value };
    value += quote;
    from = at + 2;
  }
}

function scanWord(text: string, i: number): number {
  let j = i;
  for (let width = identCharWidth(text, j); width > 0; width = identCharWidth(text, j)) j += width;
  return j;
}

/** Shortens a piece of source text for an error message. */
export function excerpt(text: string, max = 40): string {
  const chars = Array.from(text);
  return chars.length <= max ? text : `${chars.slice(0, max).join('')}…`;
}

/**
 * Splits text into tokens. The last token is always `end` (or `invalid` followed by `end`:
 * lexing stops at the first invalid token, since the parser cannot get past it). `/` is a token
 * only between two names with nothing around it (`customer/country`) or, with `steps`, after
 * `)`; `:` only after a word (a lambda's variable, `i: …`); anywhere else they are characters no
 * rule accepts.
 */
export function lex(text: string, options: LexOptions = {}): Lexed {
  const tokens: Token[] = [];
  const starts: number[] = [];
  const ends: number[] = [];
  let i = 0;
  // The position of text[i]: characters before it, plus one. Kept up to date by `to`.
  let position = 1;
  let at = 0;
  const to = (end: number) => {
    position += codePoints(text, at, end);
    at = end;
    i = end;
  };
  const push = (token: Token, start: number, end: number) => {
    tokens.push(token);
    starts.push(start);
    ends.push(end);
    to(end);
  };
  const invalid = (problem: string, fatal = false) => {
    tokens.push(
      fatal
        ? { kind: 'invalid', problem, position, fatal }
        : { kind: 'invalid', problem, position },
    );
    starts.push(i);
    ends.push(i);
  };
  const previousEndsHere = (kinds: readonly Token['kind'][]) => {
    const last = tokens.length - 1;
    return last >= 0 && ends[last] === i && kinds.includes((tokens[last] as Token).kind);
  };
  while (i < text.length) {
    if (i !== at) to(i);
    const c = text[i] as string;
    if (isWhitespace(c)) {
      i++;
      continue;
    }
    if (c === '(' || c === ')' || c === ',') {
      const kind = c === '(' ? 'lparen' : c === ')' ? 'rparen' : 'comma';
      push({ kind, text: c, position }, i, i + 1);
    } else if (c === "'" || c === '"') {
      const scanned = scanQuoted(text, i);
      if (scanned === null) {
        invalid(c === "'" ? 'an unterminated string' : 'an unterminated quoted name');
        break;
      }
      const source = text.slice(i, scanned.end);
      const kind = c === "'" ? 'string' : 'name';
      push({ kind, text: source, value: scanned.value, position }, i, scanned.end);
    } else if (
      c === '/' &&
      ((previousEndsHere(['word', 'name']) && startsName(text, i + 1)) ||
        (options.steps === true && tokens.at(-1)?.kind === 'rparen'))
    ) {
      push({ kind: 'slash', text: c, position }, i, i + 1);
    } else if (c === ':' && tokens.at(-1)?.kind === 'word') {
      push({ kind: 'colon', text: c, position }, i, i + 1);
    } else if (c === '@' && options.parameters === true) {
      const match = USER_PARAMETER.exec(text.slice(i, i + 12));
      const end = match === null ? i : i + match[0].length;
      if (match === null || identCharWidth(text, end) > 0) {
        const word = /^@[\w.]*/.exec(text.slice(i))?.[0] ?? '@';
        invalid(
          `unknown parameter '${excerpt(word)}' at position ${position}; use @user.id, @user.email or @user.role`,
          true,
        );
        break;
      }
      const field = match[1] as UserField;
      push({ kind: 'parameter', text: match[0], field, position }, i, end);
    } else if (c === '-' || isDigit(c)) {
      if (!lexNumeric(text, i, c, position, push, invalid)) break;
    } else if (identCharWidth(text, i) > 0) {
      const end = scanWord(text, i);
      push({ kind: 'word', text: text.slice(i, end), position }, i, end);
    } else {
      invalid(`unexpected character '${charAt(text, i)}'`);
      break;
    }
  }
  if (i !== at) to(i);
  const last = text.length;
  tokens.push({ kind: 'end', position: position + codePoints(text, at, last) });
  starts.push(last);
  ends.push(last);
  return { tokens, starts, ends };
}

/** Whether a name (a word or a quoted name) starts at `i`. */
function startsName(text: string, i: number): boolean {
  return text[i] === '"' || identCharWidth(text, i) > 0;
}

/**
 * A token starting with `-` or a digit: a date or time, a number, a word that starts with
 * digits (`2fa_enabled`), or a malformed number. False when lexing must stop.
 */
function lexNumeric(
  text: string,
  i: number,
  c: string,
  position: number,
  push: (token: Token, start: number, end: number) => void,
  invalid: (problem: string) => void,
): boolean {
  const temporal = isDigit(c) ? scanTemporal(text, i) : null;
  if (temporal !== null) {
    if ('problem' in temporal) {
      invalid(temporal.problem);
      return false;
    }
    const { literal } = temporal;
    push({ kind: 'temporal', text: literal.text, literal, position }, i, temporal.end);
    return true;
  }
  const end = scanNumber(text, i);
  if (end !== -1 && identCharWidth(text, end) === 0) {
    push({ kind: 'number', text: text.slice(i, end), position }, i, end);
    return true;
  }
  // A name may start with a digit (`2fa_enabled`): a number run straight into letters is a
  // word when the whole run is identifier characters, else a malformed number (`1.5abc`).
  const wordEnd = isDigit(c) ? scanWord(text, i) : i;
  if (end !== -1 && wordEnd >= end) {
    push({ kind: 'word', text: text.slice(i, wordEnd), position }, i, wordEnd);
    return true;
  }
  if (end === -1) invalid(`unexpected character '${c}'`);
  else invalid(`a malformed number '${excerpt(text.slice(i, scanWord(text, end)))}'`);
  return false;
}

/** The tokens of `lex`. */
export function tokenize(text: string, options?: LexOptions): Token[] {
  return lex(text, options).tokens as Token[];
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
  // The common key, an id: nothing to trim, and every digit run is a number (hot path).
  if (isDigitRun(text)) return { kind: 'number', text };
  let start = 0;
  let end = text.length;
  while (start < end && isWhitespace(text[start])) start++;
  while (end > start && isWhitespace(text[end - 1])) end--;
  const token = text.slice(start, end);
  if (token.length === 0) {
    throw invalidQuery("The key value is empty; write '' for an empty string");
  }
  if (token[0] === "'") {
    const scanned = scanQuoted(token, 0);
    if (scanned === null) {
      throw invalidQuery(
        `Invalid key value ${excerpt(token)}: the string has no closing quote (write '' for a quote inside it)`,
      );
    }
    if (scanned.end !== token.length) {
      const after = codePoints(text, 0, start + scanned.end) + 1;
      throw invalidQuery(
        `Invalid key value ${excerpt(token)}: unexpected text after the closing quote at position ${after} (write '' for a quote inside a string)`,
      );
    }
    return { kind: 'string', value: scanned.value };
  }
  if (scanNumber(token, 0) === token.length) return { kind: 'number', text: token };
  return keywordLiteral(token) ?? { kind: 'string', value: token };
}
