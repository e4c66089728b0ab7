/**
 * What an OData request asks of its answer's form (docs/odata.md, "Formats"): the JSON
 * metadata level (`odata.metadata=minimal|full|none`) and `IEEE754Compatible`, from `$format`
 * or else the `Accept` header; CSDL XML or JSON for `$metadata`; and the OData preferences of
 * `Prefer` (`return=minimal|representation`, `odata.maxpagesize=<n>`). Checks text only.
 */
import { odataUnsupported } from '../errors.js';
import { excerpt } from '../query/lexer.js';

export type MetadataLevel = 'minimal' | 'full' | 'none';

export interface ODataFormat {
  readonly metadata: MetadataLevel;
  readonly ieee754: boolean;
}

const MINIMAL: ODataFormat = { metadata: 'minimal', ieee754: false };

/** A media type's parameters, names lower-cased. */
function parametersOf(range: string): Map<string, string> {
  const parameters = new Map<string, string>();
  for (const part of range.split(';').slice(1)) {
    const equals = part.indexOf('=');
    if (equals === -1) continue;
    parameters.set(
      part.slice(0, equals).trim().toLowerCase(),
      part
        .slice(equals + 1)
        .trim()
        .replace(/^"|"$/g, '')
        .toLowerCase(),
    );
  }
  return parameters;
}

function formatOfRange(range: string): ODataFormat {
  const parameters = parametersOf(range);
  const level = parameters.get('odata.metadata') ?? parameters.get('metadata') ?? 'minimal';
  if (level !== 'minimal' && level !== 'full' && level !== 'none') {
    throw odataUnsupported(
      `odata.metadata=${excerpt(level)} is not a metadata level; use minimal, full or none`,
    );
  }
  const ieee = parameters.get('ieee754compatible');
  return { metadata: level, ieee754: ieee === 'true' };
}

const mediaType = (range: string): string => (range.split(';')[0] ?? '').trim().toLowerCase();

/** The JSON form of a data answer: `$format` first, else the first JSON range of `Accept`. */
export function dataFormat(format: string | undefined, accept: string | undefined): ODataFormat {
  if (format !== undefined) {
    const type = mediaType(format);
    if (type !== 'json' && type !== 'application/json') {
      throw odataUnsupported(
        `$format=${excerpt(format)} is not served; OData answers here are JSON ($format=json)`,
      );
    }
    return formatOfRange(format);
  }
  if (accept === undefined) return MINIMAL;
  for (const range of accept.split(',')) {
    const type = mediaType(range);
    if (type === 'application/json') return formatOfRange(range);
  }
  return MINIMAL;
}

/** `$metadata` as CSDL JSON (`$format=json`, or Accept naming JSON before XML) or XML. */
export function metadataFormat(
  format: string | undefined,
  accept: string | undefined,
): 'xml' | 'json' {
  if (format !== undefined) {
    const type = mediaType(format);
    if (type === 'json' || type === 'application/json') return 'json';
    if (type === 'xml' || type === 'application/xml') return 'xml';
    throw odataUnsupported(
      `$format=${excerpt(format)} is not served for $metadata; use xml or json`,
    );
  }
  for (const range of (accept ?? '').split(',')) {
    const type = mediaType(range);
    if (type === 'application/json') return 'json';
    if (type === 'application/xml' || type === '*/*' || type === 'application/*') return 'xml';
  }
  return 'xml';
}

export interface ODataPreferences {
  /** `return=minimal`: null when not given. */
  readonly returns: 'minimal' | 'representation' | null;
  /** `odata.maxpagesize=<n>` (also `maxpagesize`, 4.01): null when not given or not a count. */
  readonly maxPageSize: number | null;
}

/** The OData preferences of the Prefer header (others are left to query/prefer.ts or ignored). */
export function odataPreferences(header: string | readonly string[] | undefined): ODataPreferences {
  if (header === undefined) return { returns: null, maxPageSize: null };
  const text = typeof header === 'string' ? header : header.join(',');
  let returns: ODataPreferences['returns'] = null;
  let maxPageSize: number | null = null;
  for (const item of text.split(',')) {
    const [name = '', value = ''] = (item.split(';')[0] ?? '').split('=').map((s) => s.trim());
    const key = name.toLowerCase();
    if (key === 'return' && returns === null) {
      if (value === 'minimal' || value === 'representation') returns = value;
    } else if ((key === 'odata.maxpagesize' || key === 'maxpagesize') && maxPageSize === null) {
      if (/^[0-9]{1,9}$/.test(value) && Number(value) > 0) maxPageSize = Number(value);
    }
  }
  return { returns, maxPageSize };
}
