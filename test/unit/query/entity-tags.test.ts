/** If-None-Match / If-Match lists (RFC 9110 §13.1.1, §13.1.2): parsed, compared weakly and strongly. */
import { describe, expect, test } from '@jest/globals';
import { ifMatchHolds, noneMatchHolds, parseEntityTags } from '../../../src/query/entity-tags.js';

describe('parseEntityTags', () => {
  test.each([
    [undefined, null],
    ['*', '*'],
    ['  *  ', '*'],
    ['"a"', [{ opaque: '"a"', weak: false }]],
    ['W/"a"', [{ opaque: '"a"', weak: true }]],
    [
      '"a", W/"b" ,"c"',
      [
        { opaque: '"a"', weak: false },
        { opaque: '"b"', weak: true },
        { opaque: '"c"', weak: false },
      ],
    ],
    ['"a,b"', [{ opaque: '"a,b"', weak: false }]],
    ['""', [{ opaque: '""', weak: false }]],
    ['', []],
    [',,', []],
    ['garbage', []],
    ['"unterminated', []],
    ['w/"lowercase"', []],
    ['garbage, "a"', [{ opaque: '"a"', weak: false }]],
    ['"a" junk, "b"', [{ opaque: '"b"', weak: false }]],
    ['"a", *', [{ opaque: '"a"', weak: false }]],
    ['"sp ace"', []],
  ])('%j', (header, parsed) => {
    expect(parseEntityTags(header)).toEqual(parsed);
  });
});

describe('comparison', () => {
  test('If-None-Match is weak: W/"x" matches "x"; * matches; no header never', () => {
    expect(noneMatchHolds(parseEntityTags('W/"x"'), '"x"')).toBe(true);
    expect(noneMatchHolds(parseEntityTags('"y", "x"'), '"x"')).toBe(true);
    expect(noneMatchHolds(parseEntityTags('*'), '"x"')).toBe(true);
    expect(noneMatchHolds(parseEntityTags('"y"'), '"x"')).toBe(false);
    expect(noneMatchHolds(parseEntityTags('garbage'), '"x"')).toBe(false);
    expect(noneMatchHolds(null, '"x"')).toBe(false);
  });

  test('If-Match is strong: a weak tag never matches; * needs a current row', () => {
    const tags = (header: string) => parseEntityTags(header) ?? [];
    expect(ifMatchHolds(tags('"x"'), '"x"')).toBe(true);
    expect(ifMatchHolds(tags('"y", "x"'), '"x"')).toBe(true);
    expect(ifMatchHolds(tags('W/"x"'), '"x"')).toBe(false);
    expect(ifMatchHolds(tags('"x"'), 'W/"x"')).toBe(false);
    expect(ifMatchHolds(tags('*'), '"x"')).toBe(true);
    expect(ifMatchHolds(tags('*'), null)).toBe(false);
    expect(ifMatchHolds(tags('"x"'), null)).toBe(false);
    expect(ifMatchHolds(tags('garbage'), '"x"')).toBe(false);
  });
});

describe('If-None-Match against a weak current tag (the API description, $metadata)', () => {
  const current = 'W/"abc"';
  test.each<[string | undefined, boolean]>([
    [undefined, false],
    ['', false],
    ['W/"abc"', true],
    ['"abc"', true],
    ['"abd"', false],
    ['"x", W/"abc"', true],
    ['"x",W/"abc"', true],
    ['  W/"abc"  ', true],
    ['"x" , "y"', false],
    ['*', true],
    [' * ', true],
    ['"x", *', false],
    ['abc', false],
    ['W/abc', false],
    ['W/ "abc"', false],
    ['"ab"c"', false],
    ['garbage, W/"abc"', true],
    ['"a,b", "abc"', true],
  ])('%j → %s', (header, holds) => {
    expect(noneMatchHolds(parseEntityTags(header), current)).toBe(holds);
  });
});
