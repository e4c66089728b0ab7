/**
 * Which coding of a stored answer to send (Accept-Encoding) and whether the client's copy is
 * still current (If-None-Match), as RFC 9110 §12.5.3 and §13.1.2 read them.
 */

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

/** Whether If-None-Match names `etag` (weak comparison) or is `*`. */
export function matchesETag(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  const opaque = (tag: string) => tag.trim().replace(/^W\//, '');
  const wanted = opaque(etag);
  return header.split(',').some((tag) => tag.trim() === '*' || opaque(tag) === wanted);
}
