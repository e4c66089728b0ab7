/**
 * OData names (docs/odata.md, "Names"): a table, column, relation or routine name that is not an
 * OData SimpleIdentifier is written with each character that may not stand where it stands as
 * `_xHHHH_` (its UTF-16 code unit in four upper-case hex digits, the escape XML names use), and
 * an underscore that would start such an escape in the name itself as `_x005F_`. So `zip code`
 * is `zip_x0020_code`, `2fa` is `_x0032_fa`, `order-items` is `order_x002D_items`, and `größe`
 * stays `größe`. The rule is a bijection: every name has one identifier and an identifier names
 * one name, so two names never collide; the same rule applies in URLs, bodies, query options and
 * `$metadata`. `decodeName` of a text that is not the canonical identifier of any name is null.
 */
import { invalidQuery } from '../errors.js';
import { excerpt } from '../query/lexer.js';

/** A first character: a letter, a letter number or `_` (OData CSDL SimpleIdentifier). */
const FIRST = /[\p{L}\p{Nl}_]/u;
/** Any later character: those, digits, marks, connector punctuation and format characters. */
const LATER = /[\p{L}\p{Nl}\p{Nd}\p{Mn}\p{Mc}\p{Pc}\p{Cf}]/u;
/** An escape: `_x`, four hex digits, `_`. */
const ESCAPE = /_x[0-9A-Fa-f]{4}_/y;
const ESCAPES = /_x([0-9A-F]{4})_/g;
/** A name that needs no change at all (the common case, tested once). */
const PLAIN = /^[\p{L}\p{Nl}_][\p{L}\p{Nl}\p{Nd}\p{Mn}\p{Mc}\p{Pc}\p{Cf}]*$/u;

const hex = (unit: number): string => `_x${unit.toString(16).toUpperCase().padStart(4, '0')}_`;

/** The OData identifier of a name. */
export function encodeName(name: string): string {
  if (PLAIN.test(name) && !name.includes('_x')) return name;
  let out = '';
  let i = 0;
  for (const char of name) {
    const allowed = (i === 0 ? FIRST : LATER).test(char);
    ESCAPE.lastIndex = i;
    if (char === '_' && ESCAPE.test(name)) out += hex(0x5f);
    else if (allowed) out += char;
    else for (let k = 0; k < char.length; k++) out += hex(char.charCodeAt(k));
    i += char.length;
  }
  return out;
}

const isIdentifier = (text: string): boolean => text.length > 0 && PLAIN.test(text);

/** The name an identifier stands for, or null when it is not the identifier of any name. */
export function decodeName(identifier: string): string | null {
  if (!isIdentifier(identifier)) return null;
  if (!identifier.includes('_x')) return identifier;
  const name = identifier.replace(ESCAPES, (_, digits: string) =>
    String.fromCharCode(Number.parseInt(digits, 16)),
  );
  return encodeName(name) === identifier ? name : null;
}

/**
 * The name of an identifier that holds `_x`, refusing one whose escapes are not the rule's
 * (`a_x0041_b`, a lower-case `_x00e9_`): it names nothing, and passed on as it is it would
 * address a column of that very spelling, whose OData name is another (`a_x005F_x0041_b`).
 */
export function canonicalName(identifier: string, refuse = invalidQuery): string {
  const name = decodeName(identifier);
  if (name !== null || !/_x[0-9A-Fa-f]{4}_/.test(identifier)) return name ?? identifier;
  throw refuse(
    `'${excerpt(identifier)}' is not an OData name: its _xHHHH_ escapes are not those of any name (docs/odata.md, "Names")`,
  );
}

/** A name as the query language writes it: as it is when it reads as a name, else in double quotes. */
export function queryName(name: string): string {
  return PLAIN.test(name) ? name : `"${name.replaceAll('"', '""')}"`;
}

/**
 * A query option's text with every identifier that stands for another name (`zip_x0020_code`)
 * written as that name in double quotes (`"zip code"`), which the query language reads
 * (docs/reading.md); strings in single quotes and names in double quotes are left as they are.
 * Identifiers without an escape are their own names, so most texts come back unchanged.
 */
export function decodeQueryText(text: string): string {
  if (!text.includes('_x')) return text;
  let out = '';
  let i = 0;
  while (i < text.length) {
    const c = text[i] as string;
    if (c === "'" || c === '"') {
      const end = quotedEnd(text, i);
      out += text.slice(i, end);
      i = end;
      continue;
    }
    const run = /[\p{L}\p{Nl}\p{Nd}\p{Mn}\p{Mc}\p{Pc}\p{Cf}]+/uy;
    run.lastIndex = i;
    const match = run.exec(text);
    if (match === null) {
      out += c;
      i++;
      continue;
    }
    const word = match[0];
    const name = word.includes('_x') ? canonicalName(word) : null;
    out += name === null || name === word ? word : `"${name.replaceAll('"', '""')}"`;
    i += word.length;
  }
  return out;
}

/** Where a quoted run that opens at `start` ends (a doubled quote stands for itself). */
function quotedEnd(text: string, start: number): number {
  const mark = text[start];
  let i = start + 1;
  while (i < text.length) {
    if (text[i] === mark) {
      if (text[i + 1] !== mark) return i + 1;
      i += 2;
    } else i++;
  }
  return text.length;
}

/**
 * The table an entity set's name in a URL stands for: the set's own table when the role's model
 * knows the name, else the name it stands for as canonicalName reads it (the pipeline answers a
 * table it does not know with its 404). One function for a request alone and inside `$batch`.
 */
export function tableNamed(
  known: { readonly table: { readonly name: string } } | undefined,
  name: string,
): string {
  return known?.table.name ?? canonicalName(name);
}
