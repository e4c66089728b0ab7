/**
 * DATE and DATETIME/TIMESTAMP (docs/types.md): strings of a fixed shape, a DATETIME(n) with
 * exactly n fractional digits. (TIME is text with a time's shape: text-kinds.ts.)
 */
import { fractionDigits } from '../db/schema-types.js';
import { type ColumnKind, type Flavour, keptKey } from './column-kind.js';
import { datetimeEdm, datetimeValue, sameValue } from './edm.js';
import { temporalText, temporalWriter, textWriter, writeTemporal } from './json-text.js';
import { TEMPORAL, textKeyValue } from './seek-values.js';
import { datetimeText, textValue, wellFormed } from './write-values.js';

const DATE_PATTERN = '^[0-9]{4}-[0-9]{2}-[0-9]{2}$';
const DATETIME_PATTERN = '^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]{1,6})?$';
/** What a write takes besides: `T` for the space, and a zone (`Z`, `±hh:mm`) converted to UTC. */
const DATETIME_WRITE_PATTERN =
  '^[0-9]{4}-[0-9]{2}-[0-9]{2}([ T][0-9]{2}:[0-9]{2}(:[0-9]{2}(\\.[0-9]{1,6})?)?(Z|[+-][0-9]{2}:[0-9]{2})?)?$';

/** `YYYY-MM-DD`, optionally with `[ T]HH:MM[:SS[.f…]]`: MySQL reads these without a warning. */
const DATETIME_TEXT = /^\d{4}-\d{2}-\d{2}(?:[ T]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?$/;
const DATE_TEXT = /^\d{4}-\d{2}-\d{2}$/;

/**
 * A date or time inside a JSON array: MariaDB writes it as its text; MySQL with six fractional
 * digits whatever the column's, so it is cast to text. (TIME is text-kinds.ts's.)
 */
export function temporalTokenSql(ref: string, _column: unknown, flavour: Flavour): string {
  return flavour === 'mariadb' ? ref : `CAST(${ref} AS CHAR)`;
}

/** What both have alike: compared and sought as text in a CAST to their type. */
const TEMPORAL_KIND: Pick<
  ColumnKind,
  | 'readSql'
  | 'tokenSql'
  | 'takesObjects'
  | 'filterable'
  | 'sortsByNumber'
  | 'seekValue'
  | 'seekParameter'
  | 'keyIsExact'
  | 'keyAsNumber'
  | 'rowImageKey'
  | 'userIndex'
  | 'userEquals'
  | 'policyEquals'
  | 'aggregates'
  | 'seekable'
  | 'notAKey'
  | 'sumType'
  | 'width'
  | 'storedKey'
> = {
  readSql: (ref) => ref,
  tokenSql: temporalTokenSql,
  takesObjects: false,
  notAKey: null,
  // A date given as text might be read with a "truncated" warning.
  keyIsExact: () => false,
  filterable: true,
  seekable: () => true,
  sortsByNumber: () => false,
  seekValue: textKeyValue,
  seekParameter: (_column, value) =>
    typeof value === 'string' && TEMPORAL.test(value) ? value : undefined,
  keyAsNumber: false,
  rowImageKey: false,
  userIndex: () => null,
  userEquals: null,
  policyEquals: true,
  aggregates: 'order',
  sumType: 'integer',
  width: 'fixed',
  // A temporal is converted to the column's type.
  storedKey: keptKey,
};

export const dateKind: ColumnKind = {
  edm: { type: () => ({ name: 'Edm.Date' }), value: sameValue, body: null },
  ...TEMPORAL_KIND,
  json: () => writeTemporal,
  jsonToken: () => textWriter(writeTemporal),
  // Digits and dashes: never quoted.
  csv: () => String,
  schema: () => ({
    type: 'string',
    format: 'date',
    pattern: DATE_PATTERN,
    description: 'YYYY-MM-DD',
  }),
  write: (_column, value, where) => textValue(value, where),
  key: (_column, _given, text, where) => ({ kind: 'value', value: wellFormed(text, where) }),
  // '2024-01-01 10:00:00' into a DATE is stored as 2024-01-01 with Note 1265.
  storesExactly: (_column, value) => typeof value === 'string' && DATE_TEXT.test(value),
  castTarget: () => 'DATE',
  filterType: () => 'date',
  seekPlaceholder: () => 'CAST(? AS DATE)',
};

export const datetimeKind: ColumnKind = {
  edm: { type: datetimeEdm, value: datetimeValue, body: null },
  ...TEMPORAL_KIND,
  json: (column) => temporalWriter(fractionDigits(column), true),
  jsonToken: (column) => textWriter(temporalWriter(fractionDigits(column), true)),
  // Exactly the column's fractional digits, as in JSON (the binary protocol drops a zero one).
  csv: (column) => temporalText(fractionDigits(column), true),
  schema: (column, direction) => {
    const type = column.columnType;
    const digits = fractionDigits(column);
    const shape = `YYYY-MM-DD HH:MM:SS${digits === 0 ? '' : `.${'f'.repeat(digits)}`}`;
    if (direction === 'write') {
      return {
        type: 'string',
        pattern: DATETIME_WRITE_PATTERN,
        description: `${type}; ${shape}, or ISO 8601 with a zone (2024-05-01T10:00:00.250Z), stored as its UTC wall time`,
      };
    }
    return {
      type: 'string',
      pattern: DATETIME_PATTERN,
      description:
        column.dataType === 'timestamp'
          ? `${type}; ${shape} in UTC`
          : `${type}; ${shape} as stored, no time zone`,
    };
  },
  write: (column, value, where) =>
    typeof value === 'string' ? datetimeText(column, value, where) : textValue(value, where),
  // The same instant a written value or a $filter datetime means (ISO 8601 with a zone).
  key: (column, _given, text, where) => ({
    kind: 'value',
    value: datetimeText(column, text, where),
  }),
  storesExactly: (_column, value) => typeof value === 'string' && DATETIME_TEXT.test(value),
  castTarget: (column) => {
    const digits = fractionDigits(column);
    return digits > 0 ? `DATETIME(${digits})` : 'DATETIME';
  },
  filterType: () => 'datetime',
  seekPlaceholder: () => 'CAST(? AS DATETIME(6))',
};
