/**
 * The unquoted date and time literals of docs/filters.md (`2024-01-03`, `2024-01-03T10:00:00Z`,
 * `2024-01-03T10:00:00.5+02:00`, `12:30:00`): recognised at a digit by the lexer, checked
 * (month 13, day 32, hour 24 are errors) and normalised to the text MySQL is sent, a datetime
 * shifted to UTC by string arithmetic alone, so no time zone of the process or server matters.
 */
import type { TemporalLiteral } from './ast.js';

/** What scanTemporal found at `i`: a literal, or the problem with what looks like one. */
export type TemporalScan =
  | { readonly end: number; readonly literal: TemporalLiteral }
  | { readonly end: number; readonly problem: string };

// The characters a date/time literal is made of; the run of them is matched as a whole, so
// `2024-01-03T10:00` (no zone) is one malformed literal, not a date followed by junk.
const RUN_CHAR = /^[0-9A-Za-z:.+-]$/;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATETIME =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?(?:[Zz]|([+-])(\d{2}):(\d{2}))$/;
const DATETIME_NO_ZONE = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?$/;
const SPACED_OFFSET = /^\d{2}:\d{2}$/;
const TIME_OF_DAY = /^(\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?$/;

/** MySQL keeps at most microseconds (DATETIME(6), TIME(6)). */
const MAX_FRACTION_DIGITS = 6;

const isDigit = (c: string | undefined): boolean => c !== undefined && c >= '0' && c <= '9';

/**
 * A date/time literal starting at `chars[i]` (a digit), or null when the text there is not
 * shaped like one (four digits then `-` then a digit, or one or two digits then `:`). Costs
 * a few character reads for an ordinary number. Indexes are UTF-16 code units: every character
 * of such a literal is ASCII, so it is as long in code units as in characters.
 */
export function scanTemporal(chars: string, i: number): TemporalScan | null {
  const dateLike =
    chars[i + 4] === '-' &&
    isDigit(chars[i + 5]) &&
    isDigit(chars[i + 1]) &&
    isDigit(chars[i + 2]) &&
    isDigit(chars[i + 3]);
  const timeLike =
    !dateLike && (chars[i + 1] === ':' || (chars[i + 2] === ':' && isDigit(chars[i + 1])));
  if (!dateLike && !timeLike) return null;
  let end = i;
  while (end < chars.length && RUN_CHAR.test(chars[end] as string)) end++;
  let text = chars.slice(i, end);
  // `+02:00` sent unencoded in a query string arrives as ` 02:00` (`+` means a space there, and
  // odata-query does not encode it). A datetime without a zone followed by ` hh:mm` is nothing
  // else the grammar accepts, so it is read as the `+` offset the client wrote.
  if (chars[end] === ' ' && DATETIME_NO_ZONE.test(text)) {
    const after = chars.slice(end + 1, end + 6);
    const next = chars[end + 6];
    if (SPACED_OFFSET.test(after) && (next === undefined || !RUN_CHAR.test(next))) {
      text = `${text}+${after}`;
      end += 6;
    }
  }
  const problem = (what: string, why?: string) => ({
    end,
    problem: `${what} '${shorten(text)}'${why === undefined ? '' : ` (${why})`}`,
  });
  let match = DATE.exec(text);
  if (match !== null) {
    const [, y, mo, d] = match as unknown as string[];
    const bad = checkDate(y as string, mo as string, d as string);
    if (bad !== null) return problem('an invalid date', bad);
    return { end, literal: { kind: 'date', text, value: text } };
  }
  match = DATETIME.exec(text);
  if (match !== null) {
    const [, y, mo, d, h, mi, s = '00', fraction = '', sign, oh, om] = match as unknown as (
      | string
      | undefined
    )[];
    const bad =
      checkDate(y as string, mo as string, d as string) ??
      checkTime(h as string, mi as string, s, fraction) ??
      (sign === undefined ? null : checkOffset(oh as string, om as string));
    if (bad !== null) return problem('an invalid datetime', bad);
    const utc = toUtc(
      [Number(y), Number(mo), Number(d), Number(h), Number(mi)],
      sign === undefined ? 0 : (sign === '-' ? -1 : 1) * (Number(oh) * 60 + Number(om)),
    );
    if (utc === null)
      return problem('an invalid datetime', 'outside the years 0000 to 9999 in UTC');
    return { end, literal: { kind: 'datetime', text, value: `${utc}:${s}.${micros(fraction)}` } };
  }
  match = TIME_OF_DAY.exec(text);
  if (match !== null) {
    const [, h, mi, s, fraction = ''] = match as unknown as (string | undefined)[];
    const bad = checkTime(h as string, mi as string, s as string, fraction);
    if (bad !== null) return problem('an invalid time of day', bad);
    return {
      end,
      literal: { kind: 'timeofday', text, value: `${h}:${mi}:${s}.${micros(fraction)}` },
    };
  }
  if (DATETIME_NO_ZONE.test(text)) {
    return problem('a datetime without a time zone', "end it with 'Z' or an offset like +01:00");
  }
  return dateLike
    ? problem('a malformed date', 'write YYYY-MM-DD or YYYY-MM-DDThh:mm:ssZ')
    : problem('a malformed time of day', 'write hh:mm:ss');
}

function shorten(text: string): string {
  return text.length <= 40 ? text : `${text.slice(0, 40)}…`;
}

function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return isLeapYear(year) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

function checkDate(y: string, mo: string, d: string): string | null {
  const month = Number(mo);
  const day = Number(d);
  if (month < 1 || month > 12) return `month ${mo}; months are 01 to 12`;
  const last = daysInMonth(Number(y), month);
  if (day < 1 || day > last) return `day ${d}; ${y}-${mo} has ${last} days`;
  return null;
}

function checkTime(h: string, mi: string, s: string, fraction: string): string | null {
  if (Number(h) > 23) return `hour ${h}; hours are 00 to 23`;
  if (Number(mi) > 59) return `minute ${mi}; minutes are 00 to 59`;
  if (Number(s) > 59) return `second ${s}; seconds are 00 to 59`;
  if (/[1-9]/.test(fraction.slice(MAX_FRACTION_DIGITS))) {
    return `more than ${MAX_FRACTION_DIGITS} fractional digits; MySQL keeps microseconds`;
  }
  return null;
}

function checkOffset(oh: string, om: string): string | null {
  if (Number(oh) > 23) return `offset hour ${oh}; offsets are -23:59 to +23:59`;
  if (Number(om) > 59) return `offset minute ${om}; minutes are 00 to 59`;
  return null;
}

/** The fraction as exactly six digits (digits past six are zeros: checkTime made sure). */
function micros(fraction: string): string {
  return fraction.slice(0, MAX_FRACTION_DIGITS).padEnd(MAX_FRACTION_DIGITS, '0');
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/**
 * `YYYY-MM-DD hh:mm` in UTC for a local wall time `offsetMinutes` ahead of UTC, or null when
 * the year leaves 0000–9999. An offset is under a day, so the date moves by one day at most.
 */
function toUtc(
  [year, month, day, hour, minute]: readonly number[],
  offsetMinutes: number,
): string | null {
  let y = year as number;
  let mo = month as number;
  let d = day as number;
  let minutes = (hour as number) * 60 + (minute as number) - offsetMinutes;
  if (minutes < 0) {
    minutes += 1440;
    d -= 1;
    if (d === 0) {
      mo -= 1;
      if (mo === 0) {
        mo = 12;
        y -= 1;
      }
      d = daysInMonth(y, mo);
    }
  } else if (minutes >= 1440) {
    minutes -= 1440;
    d += 1;
    if (d > daysInMonth(y, mo)) {
      d = 1;
      mo += 1;
      if (mo === 13) {
        mo = 1;
        y += 1;
      }
    }
  }
  if (y < 0 || y > 9999) return null;
  return `${pad(y, 4)}-${pad(mo)}-${pad(d)} ${pad(Math.floor(minutes / 60))}:${pad(minutes % 60)}`;
}

// ---- Quoted date and time values ----------------------------------------------------------

const DATETIME_VALUE =
  /^(\d{4})-(\d{2})-(\d{2})[ Tt](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?(?:([Zz])|([+-])(\d{2}):(\d{2}))?$/;
const TIME_VALUE = /^(-?)(\d{1,3}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?$/;

/** MySQL's TIME range is -838:59:59 to 838:59:59. */
const MAX_TIME_HOURS = 838;

/**
 * What a date or time value in quotes stands for: a write's value for a DATETIME or TIMESTAMP
 * column, or a quoted string a filter compares with a date or time column. `YYYY-MM-DD`;
 * `YYYY-MM-DD hh:mm[:ss[.f]]` with a space or `T`, as wall time; the same with `Z` or an offset
 * (what `Date.toISOString()` writes), shifted to UTC wall time as an unquoted datetime literal
 * is; for a TIME, `[-]h…:mm[:ss[.f]]` within MySQL's range. `zoned` says whether an offset was
 * applied. A string (the problem) when the text is none of these.
 */
export function readTemporalText(
  text: string,
  type: 'date' | 'datetime' | 'time',
): (TemporalLiteral & { readonly zoned: boolean }) | string {
  if (type === 'time') return readTimeText(text);
  const date = DATE.exec(text);
  if (date !== null) {
    const [, y, mo, d] = date as unknown as string[];
    const bad = checkDate(y as string, mo as string, d as string);
    if (bad !== null) return `an invalid date (${bad})`;
    return { kind: 'date', text, value: text, zoned: false };
  }
  const match = DATETIME_VALUE.exec(text);
  if (match === null) {
    return 'not a date or datetime: write YYYY-MM-DD, YYYY-MM-DD hh:mm:ss[.ffffff], or ISO 8601 with a zone (YYYY-MM-DDThh:mm:ss[.ffffff]Z or ±hh:mm)';
  }
  const [, y, mo, d, h, mi, s = '00', fraction = '', z, sign, oh, om] = match as unknown as (
    | string
    | undefined
  )[];
  const bad =
    checkDate(y as string, mo as string, d as string) ??
    checkTime(h as string, mi as string, s, fraction) ??
    (sign === undefined ? null : checkOffset(oh as string, om as string));
  if (bad !== null) return `an invalid datetime (${bad})`;
  const zoned = z !== undefined || sign !== undefined;
  const offset = sign === undefined ? 0 : (sign === '-' ? -1 : 1) * (Number(oh) * 60 + Number(om));
  const wall = toUtc([Number(y), Number(mo), Number(d), Number(h), Number(mi)], offset);
  if (wall === null) return 'an invalid datetime (outside the years 0000 to 9999 in UTC)';
  return { kind: 'datetime', text, value: `${wall}:${s}.${micros(fraction)}`, zoned };
}

function readTimeText(text: string): (TemporalLiteral & { readonly zoned: false }) | string {
  const match = TIME_VALUE.exec(text);
  if (match === null) return 'not a time: write hh:mm:ss[.ffffff]';
  const [, sign, h, mi, s = '00', fraction = ''] = match as unknown as string[];
  const hours = Number(h);
  const bad =
    hours > MAX_TIME_HOURS
      ? `hour ${h}; a TIME holds -838:59:59 to 838:59:59`
      : checkTime('00', mi as string, s as string, fraction as string);
  if (bad !== null) return `an invalid time (${bad})`;
  const value = `${sign}${pad(hours)}:${mi}:${s}.${micros(fraction as string)}`;
  if (hours === MAX_TIME_HOURS && value.slice(sign === '' ? 3 : 4) > ':59:59.000000') {
    return 'an invalid time (a TIME holds -838:59:59 to 838:59:59)';
  }
  return { kind: 'timeofday', text, value, zoned: false };
}
