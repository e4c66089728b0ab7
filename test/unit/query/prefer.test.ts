import { describe, expect, test } from '@jest/globals';
import {
  appliedPreferences,
  NO_PREFERENCES,
  type Preferences,
  parsePrefer,
} from '../../../src/query/prefer.js';

describe('parsePrefer', () => {
  test.each<[string | string[] | undefined, Preferences]>([
    [undefined, NO_PREFERENCES],
    ['', NO_PREFERENCES],
    ['return=representation', { ...NO_PREFERENCES, representation: true }],
    ['Return="representation"', { ...NO_PREFERENCES, representation: true }],
    ['return=minimal', NO_PREFERENCES],
    [
      'resolution=merge-duplicates, return=representation',
      { representation: true, resolution: 'merge-duplicates', maxAffected: null },
    ],
    ['resolution=ignore-duplicates;q=1', { ...NO_PREFERENCES, resolution: 'ignore-duplicates' }],
    ['resolution=upsert', NO_PREFERENCES],
    ['max-affected=0', { ...NO_PREFERENCES, maxAffected: 0 }],
    [' max-affected = 12 ', { ...NO_PREFERENCES, maxAffected: 12 }],
    // The first instance counts (RFC 7240 §2), also across repeated headers.
    [['max-affected=1', 'max-affected=x'], { ...NO_PREFERENCES, maxAffected: 1 }],
    ['return=representation, return=minimal', { ...NO_PREFERENCES, representation: true }],
    ['handling=strict, wait=5, respond-async, "odd,", x="a,b"', NO_PREFERENCES],
  ])('%j', (header, expected) => {
    expect(parsePrefer(header)).toEqual(expected);
  });

  test.each([
    'max-affected=lots',
    'max-affected=-1',
    'max-affected=1.5',
    'max-affected',
    'max-affected=9999999999999999',
  ])('%j: 400 INVALID_PREFERENCE', (header) => {
    expect(() => parsePrefer(header)).toThrow(
      expect.objectContaining({ status: 400, code: 'INVALID_PREFERENCE' }),
    );
  });

  test('Preference-Applied names what was honoured, as given', () => {
    const preferences = parsePrefer(
      'max-affected=3, resolution=merge-duplicates, return=representation',
    );
    expect(
      appliedPreferences(preferences, {
        representation: true,
        resolution: true,
        maxAffected: true,
      }),
    ).toBe('return=representation, resolution=merge-duplicates, max-affected=3');
    expect(
      appliedPreferences(preferences, {
        representation: false,
        resolution: false,
        maxAffected: false,
      }),
    ).toBe('');
  });
});
