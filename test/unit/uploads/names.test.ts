import { describe, expect, test } from '@jest/globals';
import {
  isStoredName,
  newStoredName,
  plainExtension,
  STORED_NAME,
} from '../../../src/uploads/names.js';

describe('plainExtension', () => {
  test.each<[string, string]>([
    ['photo.png', '.png'],
    ['PHOTO.JPG', '.JPG'],
    ['résumé 履歴書.pdf', '.pdf'],
    ['backup.tar.gz', '.gz'],
    ['a.b.c.d.txt', '.txt'],
    ['x.1234567890', '.1234567890'],
    ['x.12345678901', ''],
    ['README', ''],
    ['archive.', ''],
    ['.bashrc', ''],
    ['.env.local', '.local'],
    ['', ''],
    ['.', ''],
    ['..', ''],
    ['file.tóo', ''],
    ['file.p-g', ''],
    ['file.p g', ''],
    ['file.png ', ''],
    ['file.%2e', ''],
    ['dir.d/file', ''],
    ['dir/file.txt', '.txt'],
    ['C:\\Users\\me\\photo.jpeg', '.jpeg'],
    ['C:\\dir.d\\file', ''],
    ['../../etc/passwd', ''],
    ['x.png/../../y', ''],
    ['evil.png\u0000.html', '.html'],
  ])('%j → %j', (name, extension) => {
    expect(plainExtension(name)).toBe(extension);
  });
});

describe('newStoredName', () => {
  test('32 lowercase hex digits and the plain extension', () => {
    expect(newStoredName('cat.png')).toMatch(/^[0-9a-f]{32}\.png$/);
    expect(newStoredName('no extension')).toMatch(/^[0-9a-f]{32}$/);
    expect(newStoredName('../../../etc/passwd')).toMatch(/^[0-9a-f]{32}$/);
  });

  test('uses 16 random bytes', () => {
    const sizes: number[] = [];
    const name = newStoredName('a.txt', (size) => {
      sizes.push(size);
      return Buffer.alloc(size, 0xab);
    });
    expect(sizes).toEqual([16]);
    expect(name).toBe(`${'ab'.repeat(16)}.txt`);
  });

  test('names do not repeat', () => {
    const names = new Set(Array.from({ length: 10_000 }, () => newStoredName('x.bin')));
    expect(names.size).toBe(10_000);
  });

  test('every generated name passes the serving gate', () => {
    for (const original of ['a.png', 'b', 'c.tar.gz', '.d', 'e.ABCDEFGHIJ', 'f.ÿ']) {
      expect(isStoredName(newStoredName(original))).toBe(true);
    }
  });
});

describe('isStoredName', () => {
  const hex = '0123456789abcdef0123456789abcdef';
  test.each<[string, boolean]>([
    [hex, true],
    [`${hex}.png`, true],
    [`${hex}.JPG`, true],
    [`${hex}.1234567890`, true],
    [`${hex}.12345678901`, false],
    [hex.toUpperCase(), false],
    [hex.slice(1), false],
    [`${hex}0`, false],
    [`${hex}.`, false],
    [`${hex}.tar.gz`, false],
    [`.${hex}`, false],
    [`${hex}/`, false],
    [`${hex}\n`, false],
    [`${hex}.png\n`, false],
    [`../${hex}`, false],
    [`${hex}/../x`, false],
    [`/etc/passwd`, false],
    ['..', false],
    ['.hidden', false],
    ['', false],
    [`${hex}%2e`, false],
    [`${hex}\\x`, false],
    [`${hex}\u0000.png`, false],
  ])('%j → %s', (name, expected) => {
    expect(isStoredName(name)).toBe(expected);
    expect(STORED_NAME.test(name)).toBe(expected);
  });
});
