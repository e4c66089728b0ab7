/** Signed file links (uploads/file-links.ts): exact query shape, what opens and what does not. */
import { createHmac, createSecretKey } from 'node:crypto';
import { carriesLink, FileLinks } from '../../../src/uploads/file-links.js';

const SECRET = createSecretKey(Buffer.from('file-links-unit-secret-0123456789abcdef'));
const NAME = `${'a'.repeat(32)}.png`;
const NOW = 1_700_000_000_000;

function parts(query: string): { exp: string; sig: string } {
  const params = new URLSearchParams(query);
  return { exp: params.get('exp') as string, sig: params.get('sig') as string };
}

describe('FileLinks', () => {
  const links = new FileLinks(SECRET, 3600);

  test('query: exp = now + ttl in seconds, sig = HMAC-SHA256 of name and exp under a derived key', () => {
    const query = links.query(NAME, NOW);
    expect(query).toMatch(/^\?exp=1700003600&sig=[A-Za-z0-9_-]{43}$/);
    const key = createHmac('sha256', SECRET).update('tablegate signed file links v1').digest();
    const expected = createHmac('sha256', key).update(`${NAME}\n1700003600`).digest('base64url');
    expect(parts(query).sig).toBe(expected);
    // Not the secret itself: a link never shows an HMAC under the JWT key.
    const underSecret = createHmac('sha256', SECRET)
      .update(`${NAME}\n1700003600`)
      .digest('base64url');
    expect(parts(query).sig).not.toBe(underSecret);
  });

  test('opens its file until exp, and nothing else', () => {
    const { exp, sig } = parts(links.query(NAME, NOW));
    expect(links.opens(NAME, exp, sig, NOW)).toBe(true);
    expect(links.opens(NAME, exp, sig, NOW + 3_599_999)).toBe(true);
    expect(links.opens(NAME, exp, sig, NOW + 3_600_000)).toBe(false);
    expect(links.opens(`${'b'.repeat(32)}.png`, exp, sig, NOW)).toBe(false);
    expect(links.opens(NAME, String(Number(exp) + 1), sig, NOW)).toBe(false);
    expect(links.opens(NAME, `0${exp}`, sig, NOW)).toBe(false);
    expect(links.opens(NAME, exp, `${sig.slice(0, -1)}${sig.endsWith('A') ? 'B' : 'A'}`, NOW)).toBe(
      false,
    );
  });

  test.each<[unknown, unknown]>([
    [undefined, 'x'.repeat(43)],
    ['1700003600', undefined],
    [['1700003600'], 'x'.repeat(43)],
    ['1700003600', 'x'.repeat(42)],
    ['1700003600', `${'x'.repeat(42)}=`],
    ['-1', 'x'.repeat(43)],
    ['1e12', 'x'.repeat(43)],
    ['1'.repeat(13), 'x'.repeat(43)],
  ])('exp %j, sig %j never open anything', (exp, sig) => {
    expect(links.opens(NAME, exp, sig, NOW)).toBe(false);
  });

  test('another secret, another key: its links do not open here', () => {
    const other = new FileLinks(
      createSecretKey(Buffer.from('another-secret-0123456789abcdefghij')),
      3600,
    );
    const { exp, sig } = parts(other.query(NAME, NOW));
    expect(links.opens(NAME, exp, sig, NOW)).toBe(false);
  });
});

test('carriesLink: a query with exp or sig asks to be let in by a link', () => {
  expect(carriesLink({ exp: '1', sig: 'x' })).toBe(true);
  expect(carriesLink({ sig: 'x' })).toBe(true);
  expect(carriesLink({ exp: '1' })).toBe(true);
  expect(carriesLink({})).toBe(false);
  expect(carriesLink({ download: '1' })).toBe(false);
  expect(carriesLink(undefined)).toBe(false);
});
