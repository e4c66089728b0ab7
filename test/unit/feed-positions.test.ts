/**
 * Change-feed event ids (src/changes/positions.ts) and the GTID states the reader keeps
 * (src/changes/reader.ts): an id opens to the position sealed in it, and only with the key it
 * was sealed with; a GTID state is read per replication domain, exactly.
 */
import { describe, expect, test } from '@jest/globals';
import { FeedPositions, type LogPosition } from '../../src/changes/positions.js';
import { parseGtidState, sequenceOf } from '../../src/changes/reader.js';

const POSITION: LogPosition = {
  server: 'db2:3306',
  file: 'binlog.000042',
  start: 4096,
  end: 5120,
  index: 3,
  gtid: '1-1-18446744073709551615',
  before: '0-1-7,1-1-18446744073709551614',
};

describe('event ids', () => {
  const positions = new FeedPositions('one deployment secret, 32 bytes or more');

  test('open gives back every field sealed', () => {
    expect(positions.open(positions.seal(POSITION))).toEqual(POSITION);
  });

  test('another key, an edited field or an older shape is 400 BAD_FEED_POSITION', () => {
    const sealed = positions.seal(POSITION);
    const other = new FeedPositions('another deployment secret, 32 bytes').seal(POSITION);
    const [version, text, mac] = sealed.split('.') as [string, string, string];
    const fields = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as unknown[];
    const edited = Buffer.from(JSON.stringify([...fields.slice(0, 4), 0, ...fields.slice(5)]));
    const fiveFields = Buffer.from(JSON.stringify(fields.slice(1, 6)));
    for (const id of [
      other,
      `${version}.${edited.toString('base64url')}.${mac}`,
      `${version}.${fiveFields.toString('base64url')}.${mac}`,
      `${sealed}.x`,
      '',
    ]) {
      expect(() => positions.open(id)).toThrow(
        expect.objectContaining({ code: 'BAD_FEED_POSITION', status: 400 }),
      );
    }
  });

  test('the MAC in any spelling but its own (padding, stray characters, unused bits) is 400 BAD_FEED_POSITION', () => {
    const sealed = positions.seal(POSITION);
    const [version, text, mac] = sealed.split('.') as [string, string, string];
    // 16 bytes are 22 letters of base64url: the last one carries 2 bits, its 4 others unused.
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const last = alphabet.indexOf(mac.slice(-1));
    const sameBits = alphabet[(last & 0b110000) | (~last & 0b1111)] as string;
    for (const spelling of [
      `${mac}=`,
      `${mac}==`,
      `!${mac}`,
      `${mac.slice(0, 10)} ${mac.slice(10)}`,
      `${mac.slice(0, -1)}${sameBits}`,
    ]) {
      expect(Buffer.from(spelling, 'base64url').equals(Buffer.from(mac, 'base64url'))).toBe(true);
      expect(() => positions.open(`${version}.${text}.${spelling}`)).toThrow(
        expect.objectContaining({ code: 'BAD_FEED_POSITION', status: 400 }),
      );
    }
  });
});

describe('GTID states', () => {
  test('the last GTID of each domain; MySQL GTIDs and empty text give none', () => {
    expect([...parseGtidState('0-1-7, 1-2-9')]).toEqual([
      ['0', '0-1-7'],
      ['1', '1-2-9'],
    ]);
    expect(parseGtidState('').size).toBe(0);
    expect(parseGtidState('3E11FA47-71CA-11E1-9E33-C80AA9429562:23').size).toBe(0);
  });

  test('sequence numbers beyond 2^53 compare exactly', () => {
    expect(sequenceOf('1-1-18446744073709551615')).toBe(18446744073709551615n);
    expect(sequenceOf('1-1-9007199254740993') > sequenceOf('1-1-9007199254740992')).toBe(true);
  });
});
