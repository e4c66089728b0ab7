/**
 * The writers of one value's CSV field (RFC 4180, docs/reading.md): the text of what the JSON
 * writers write (json-text.ts), NULL aside (types/csv-rows.ts writes it as an empty field). The
 * column kinds (kinds.ts) pick one per column when a row shape is built.
 */

export type CellWriter = (value: unknown) => string;

/**
 * `--csv-formulas` (docs/configuration.md): `escape`, the default, writes a text cell that a
 * spreadsheet would take for a formula with a `'` in front (OWASP's advice on CSV injection);
 * `keep` writes it as it is.
 */
export type CsvFormulas = 'escape' | 'keep';

const NEEDS_QUOTES = /[",\r\n]/;

/** A text as one CSV field: as it is, or quoted when it holds a comma, a quote, CR or LF. */
export function csvField(text: string): string {
  if (text === '') return '""';
  return NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** A number's text as JSON writes it, or an empty field for what JSON writes as null. */
export function finite(text: string): string {
  return text === 'null' ? '' : text;
}

/** Bytes as base64; none as `""`, an empty value, not NULL. */
export function base64(value: Buffer): string {
  return value.length === 0 ? '""' : value.toString('base64');
}

export function text(value: unknown): string {
  if (typeof value === 'string') return csvField(value);
  if (Buffer.isBuffer(value)) return base64(value);
  return csvField(typeof value === 'object' ? JSON.stringify(value) : String(value));
}

/**
 * Whether Excel, LibreOffice or Google Sheets would read a cell starting so as a formula: `=`,
 * `+`, `-`, `@`, or a tab or CR (which they may drop before looking), as OWASP lists them.
 */
function startsFormula(text: string): boolean {
  const first = text.charCodeAt(0);
  // = + - @ TAB CR
  return (
    first === 61 || first === 43 || first === 45 || first === 64 || first === 9 || first === 13
  );
}

/** A text column's cell, `'` in front of what would be a formula (quoted as RFC 4180 needs). */
export function safeText(value: unknown): string {
  return typeof value === 'string' && startsFormula(value) ? csvField(`'${value}`) : text(value);
}

/** A JSON number: the only JSON text that starts with one of startsFormula's characters. */
const JSON_NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

/**
 * A JSON column's cell: as text, but a JSON number (`-5`) is a number to a spreadsheet too and
 * stays as it is; anything else starting so (MariaDB keeps a JSON column's text as written,
 * leading white space and all) gets its `'`.
 */
export function safeJson(value: unknown): string {
  return typeof value === 'string' && startsFormula(value) && !JSON_NUMBER.test(value)
    ? csvField(`'${value}`)
    : text(value);
}

/** BIT(n) arrives as big-endian bytes. */
export function bitCell(value: unknown): string {
  if (!Buffer.isBuffer(value)) return String(value);
  let n = 0n;
  for (const byte of value) n = (n << 8n) | BigInt(byte);
  return String(n);
}
