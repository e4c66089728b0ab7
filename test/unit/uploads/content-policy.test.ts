import { describe, expect, test } from '@jest/globals';
import { isActiveContent, mediaTypeEssence } from '../../../src/uploads/content-policy.js';

describe('mediaTypeEssence', () => {
  test.each<[string, string]>([
    ['text/html', 'text/html'],
    ['Text/HTML; charset=UTF-8', 'text/html'],
    ['  image/svg+xml ;x=y', 'image/svg+xml'],
    ['', ''],
  ])('%j → %j', (type, essence) => {
    expect(mediaTypeEssence(type)).toBe(essence);
  });
});

describe('isActiveContent', () => {
  test.each<[string, boolean]>([
    ['text/html; charset=utf-8', true],
    ['TEXT/HTML', true],
    ['application/xhtml+xml', true],
    ['image/svg+xml', true],
    ['text/xml', true],
    ['application/xml', true],
    ['application/rss+xml', true],
    ['application/atom+xml', true],
    ['application/mathml+xml', true],
    ['text/xsl', true],
    ['application/xslt+xml', true],
    ['application/javascript; charset=utf-8', true],
    ['text/javascript', true],
    ['application/x-javascript', true],
    ['application/ecmascript', true],
    ['text/ecmascript', true],
    ['multipart/x-mixed-replace', true],
    ['text/plain; charset=utf-8', false],
    ['text/css', false],
    ['text/csv', false],
    ['application/json', false],
    ['application/pdf', false],
    ['application/octet-stream', false],
    ['image/png', false],
    ['image/jpeg', false],
    ['video/mp4', false],
    ['application/zip', false],
    ['', false],
  ])('%j → %s', (type, active) => {
    expect(isActiveContent(type)).toBe(active);
  });
});
