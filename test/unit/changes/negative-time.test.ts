/**
 * decide.ts's repair of negative TIMEs as @vlasky/zongji 0.9.0 decodes MySQL's TIME2: every
 * magnitude, decoded by a copy of the library's arithmetic, comes back as MySQL wrote it; what
 * the library decodes right is left alone.
 */
import { describe, expect, test } from '@jest/globals';
import { negativeTime } from '../../../src/changes/decide.js';

const two = (n: number) => String(n).padStart(2, '0');
const text = (h: number, m: number, s: number) =>
  `${h > 99 ? String(h).padStart(3, '0') : two(h)}:${two(m)}:${two(s)}`;

/** The library's TIME2 decoding of `-h:m:s` (no fraction): bits flipped, one added, no carry. */
function asTheLibraryDecodes(h: number, m: number, s: number): string {
  const stored = 0x800000 - (h * 4096 + m * 64 + s);
  const flipped = stored ^ 0xffffff;
  const hour = (flipped >> 12) & 0x3ff;
  return `-${text(hour, (flipped >> 6) & 63, (flipped & 63) + 1)}`;
}

describe('negativeTime', () => {
  test('gives back every negative TIME the library decodes, whether it carried or not', () => {
    const wrong: string[] = [];
    for (const h of [0, 1, 9, 12, 99, 100, 838]) {
      for (let m = 0; m < 60; m++) {
        for (let s = 0; s < 60; s++) {
          if (h === 0 && m === 0 && s === 0) continue;
          const decoded = asTheLibraryDecodes(h, m, s);
          if (negativeTime(decoded) !== `-${text(h, m, s)}`) wrong.push(decoded);
        }
      }
    }
    expect(wrong).toEqual([]);
    expect(asTheLibraryDecodes(1, 0, 0)).toBe('-00:63:64');
    expect(negativeTime('-00:63:64')).toBe('-01:00:00');
    expect(negativeTime('-00:63:64.000')).toBe('-01:00:00.000');
  });

  test('leaves positive times and negative ones with a fraction as they are', () => {
    for (const value of ['00:00:00', '10:20:30', '838:59:59', '-838:59:58.1234', '-00:00:00.5']) {
      expect(negativeTime(value)).toBe(value);
    }
  });
});
