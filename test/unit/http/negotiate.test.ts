/**
 * Accept-Encoding and If-None-Match as http/negotiate.ts reads them: qualities, `q=0` refusing a
 * coding, `*`, the x-gzip alias, and weak ETag comparison.
 */
import { describe, expect, test } from '@jest/globals';
import { chooseCoding, prefersCsv } from '../../../src/http/negotiate.js';

describe('chooseCoding', () => {
  test.each<[string | undefined, string]>([
    [undefined, 'identity'],
    ['', 'identity'],
    ['identity', 'identity'],
    ['gzip', 'gzip'],
    ['br', 'br'],
    ['gzip, deflate, br', 'br'],
    ['gzip, deflate, br, zstd', 'br'],
    ['deflate', 'identity'],
    ['BR;Q=1, GZIP', 'br'],
    ['br;q=0, gzip', 'gzip'],
    ['br;q=0.5, gzip;q=0.8', 'gzip'],
    ['br;q=0.8, gzip;q=0.8', 'br'],
    ['gzip;q=0', 'identity'],
    ['*', 'br'],
    ['*;q=0', 'identity'],
    ['br;q=0, *', 'gzip'],
    ['x-gzip', 'gzip'],
    ['gzip;q=nonsense', 'identity'],
    [' , ;q=1, gzip ;  q=0.3 ', 'gzip'],
  ])('%j → %s', (header, coding) => {
    expect(chooseCoding(header)).toBe(coding);
  });
});

describe('prefersCsv', () => {
  test.each<[string | undefined, boolean]>([
    [undefined, false],
    ['*/*', false],
    ['application/json', false],
    ['text/csv', true],
    ['TEXT/CSV; charset=utf-8', true],
    ['text/*', true],
    ['text/csv, */*', true],
    ['application/json;q=0.5, text/csv', true],
    ['text/csv, application/json', false],
    ['text/csv;q=0.2, application/json;q=0.8', false],
    ['text/csv;q=0', false],
    ['text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8', false],
    ['application/vnd.csvish+json', false],
  ])('%j → %s', (header, csv) => {
    expect(prefersCsv(header)).toBe(csv);
  });
});
