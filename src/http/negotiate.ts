/**
 * Which coding of a stored answer to send (Accept-Encoding) and whether a read answers CSV
 * (Accept), as RFC 9110 §12.5.1 and §12.5.3 read them; and the Vary header that says so.
 * If-None-Match is query/entity-tags.ts's.
 */
import type { FastifyReply } from 'fastify';

export type Coding = 'br' | 'gzip' | 'identity';

/** The quality the header gives each coding it names (`*` for the rest). */
function qualities(header: string): Map<string, number> {
  const result = new Map<string, number>();
  for (const part of header.split(',')) {
    const [name = '', ...params] = part.split(';').map((s) => s.trim().toLowerCase());
    if (name === '') continue;
    const q = params.find((p) => p.startsWith('q='));
    const quality = q === undefined ? 1 : Number(q.slice(2));
    result.set(name === 'x-gzip' ? 'gzip' : name, Number.isFinite(quality) ? quality : 0);
  }
  return result;
}

/** br when accepted at least as much as gzip, else gzip when accepted, else identity. */
export function chooseCoding(header: string | undefined): Coding {
  if (header === undefined || header.trim() === '') return 'identity';
  const q = qualities(header);
  const of = (coding: Coding) => q.get(coding) ?? q.get('*') ?? 0;
  const br = of('br');
  const gzip = of('gzip');
  if (br > 0 && br >= gzip) return 'br';
  return gzip > 0 ? 'gzip' : 'identity';
}

const MAY_NAME_CSV = /csv|text\/\*/i;

/** How much a media range of Accept gives a type: its quality, and how exactly it names it. */
interface Acceptance {
  readonly quality: number;
  /** 3 for `type/subtype`, 2 for `type/*`, 1 for `*\/*`, 0 when no range names it. */
  readonly exactness: number;
}

function acceptance(ranges: readonly string[][], type: string, subtype: string): Acceptance {
  let best: Acceptance = { quality: 0, exactness: 0 };
  for (const [range = '', ...params] of ranges) {
    const [t, s] = range.split('/');
    const exactness =
      t === type && s === subtype ? 3 : t === type && s === '*' ? 2 : range === '*/*' ? 1 : 0;
    if (exactness <= best.exactness) continue;
    const q = params.find((p) => p.startsWith('q='));
    const quality = q === undefined ? 1 : Number(q.slice(2));
    best = { quality: Number.isFinite(quality) ? quality : 0, exactness };
  }
  return best;
}

/**
 * Whether a read answers CSV rather than JSON (docs/reading.md): when Accept gives `text/csv` a
 * higher quality than `application/json`, or the same through a more exact range (`text/csv,
 * *\/*`). Anything else, no Accept or one naming neither, gets JSON, the default.
 */
export function prefersCsv(header: string | undefined): boolean {
  // What nearly every client sends (nothing, `*/*`, application/json): decided without parsing.
  if (header === undefined || !MAY_NAME_CSV.test(header)) return false;
  const ranges = header
    .toLowerCase()
    .split(',')
    .map((part) => part.split(';').map((s) => s.trim()));
  const csv = acceptance(ranges, 'text', 'csv');
  const json = acceptance(ranges, 'application', 'json');
  if (csv.quality <= 0) return false;
  return (
    csv.quality > json.quality || (csv.quality === json.quality && csv.exactness > json.exactness)
  );
}

/** Adds `names` to the reply's Vary header (CORS may have put Origin there). */
export function vary(reply: FastifyReply, names: readonly string[]): void {
  const present = reply.getHeader('vary');
  if (present === undefined && names.length === 1) {
    reply.header('Vary', names[0]);
    return;
  }
  const listed = typeof present === 'string' && present !== '' ? present.split(/\s*,\s*/) : [];
  const missing = names.filter(
    (name) => !listed.some((l) => l.toLowerCase() === name.toLowerCase()),
  );
  reply.header('Vary', [...listed, ...missing].join(', '));
}
