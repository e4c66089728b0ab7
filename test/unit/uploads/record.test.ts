import { describe, expect, test } from '@jest/globals';
import { accessBase, fileRecord } from '../../../src/uploads/record.js';

describe('fileRecord', () => {
  test('every field, in the documented order', () => {
    const record = fileRecord(
      {
        fieldname: 'files',
        originalname: 'résumé 履歴書.pdf',
        encoding: '7bit',
        mimetype: 'application/pdf',
        destination: '/home/u/.tablegate/uploads',
        filename: `${'f'.repeat(32)}.pdf`,
        size: 1234,
      },
      'http://localhost:3000',
    );
    expect(Object.keys(record)).toEqual([
      'fieldname',
      'originalname',
      'encoding',
      'mimetype',
      'destination',
      'filename',
      'path',
      'size',
      'accessURL',
    ]);
    expect(record).toEqual({
      fieldname: 'files',
      originalname: 'résumé 履歴書.pdf',
      encoding: '7bit',
      mimetype: 'application/pdf',
      destination: '/home/u/.tablegate/uploads',
      filename: `${'f'.repeat(32)}.pdf`,
      path: `/home/u/.tablegate/uploads/${'f'.repeat(32)}.pdf`,
      size: 1234,
      accessURL: `http://localhost:3000/@/${'f'.repeat(32)}.pdf`,
    });
  });
});

describe('accessBase', () => {
  test.each<[string | null, string | undefined, string | null]>([
    ['https://files.example.com', 'ignored', 'https://files.example.com'],
    ['https://files.example.com/', undefined, 'https://files.example.com'],
    ['https://example.com/api//', 'evil', 'https://example.com/api'],
    [null, 'localhost:3000', 'http://localhost:3000'],
    [null, 'localhost', 'http://localhost'],
    [null, '127.0.0.1:8080', 'http://127.0.0.1:8080'],
    [null, 'api.example.org', 'http://api.example.org'],
    [null, 'my_service:80', 'http://my_service:80'],
    [null, '[::1]:3000', 'http://[::1]:3000'],
    [null, '[2001:db8::1]', 'http://[2001:db8::1]'],
    [null, undefined, null],
    [null, '', null],
    [null, 'evil.com/path', null],
    [null, 'user@evil.com', null],
    [null, 'evil.com?x=', null],
    [null, 'evil.com#', null],
    [null, 'a b', null],
    [null, 'host:port', null],
    [null, 'host:123456', null],
    [null, '"quoted"', null],
    [null, 'evil.com\\x', null],
    [null, '-leading-dash', null],
    [null, '[::1', null],
    [null, 'x'.repeat(300), null],
  ])('%j, Host %j → %j', (baseUrl, host, expected) => {
    expect(accessBase(baseUrl, host)).toBe(expected);
  });
});
