/**
 * The kernel's TCP tables as client-progress.ts reads them: rows copied from a real
 * /proc/self/net/tcp and tcp6 (a dual-stack server with an IPv4 client, seen as ::ffff:…, and
 * an IPv6 one on ::1, neither client reading), addresses spelled as the tables spell them, and
 * what a socket's client has taken worked out from its row and its client's.
 */
import type { Socket } from 'node:net';
import { describe, expect, test } from '@jest/globals';
import {
  clientProgress,
  parseTcpTable,
  tableAddress,
} from '../../../src/execute/client-progress.js';

const TCP = [
  '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode                                                     ',
  '1214: 0100007F:A9BE 0100007F:8E33 01 00000000:0001F400 00:00000000 00000000     0        0 266923 2 0000000053944b69 20 8 0 10 -1                    ',
  '   7: 0100007F:0CEA 00000000:0000 0A 00000000:00000000 00:00000000 00000000   999        0 12345 1 0000000000000000 100 0 0 10 0',
  '',
].join('\n');

const TCP6 = [
  '  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode',
  '   2: 00000000000000000000000000000000:8E33 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 266922 1 00000000c5f3b8ba 100 0 0 10 0',
  '   4: 00000000000000000000000001000000:C314 00000000000000000000000001000000:A0D3 01 00000000:0001F400 00:00000000 00000000     0        0 266925 2 0000000048d93870 20 8 0 10 -1',
  '   5: 0000000000000000FFFF00000100007F:8E33 0000000000000000FFFF00000100007F:A9BE 01 0039DC00:00000000 04:00000021 00000000     0        0 266926 2 000000002908ba97 20 0 0 15 -1',
  '   6: 00000000000000000000000001000000:A0D3 00000000000000000000000001000000:C314 01 0039DC00:00000000 04:00000023 00000000     0        0 266927 2 0000000012b55e94 20 0 0 15 -1',
  '   9: 0000000000000000FFFF00000100007F:8E33 0000000000000000FFFF00000100007F:A9BE 06 00000000:00000000 03:00001770 00000000     0        0 0 3 0000000000000000',
].join('\n');

const MAPPED = '0000000000000000FFFF00000100007F';
const LOOPBACK6 = '00000000000000000000000001000000';

describe('tableAddress', () => {
  test('IPv4 as the little-endian word the kernel prints, or big-endian', () => {
    expect(tableAddress('127.0.0.1', 'tcp', true)).toBe('0100007F');
    expect(tableAddress('10.1.2.254', 'tcp', true)).toBe('FE02010A');
    expect(tableAddress('127.0.0.1', 'tcp', false)).toBe('7F000001');
  });

  test('IPv6, IPv4-mapped and compressed, word by word', () => {
    expect(tableAddress('::1', 'tcp6', true)).toBe(LOOPBACK6);
    expect(tableAddress('::ffff:127.0.0.1', 'tcp6', true)).toBe(MAPPED);
    expect(tableAddress('::FFFF:7f00:1', 'tcp6', true)).toBe(MAPPED);
    expect(tableAddress('2001:db8::8a2e:370:7334', 'tcp6', true)).toBe(
      'B80D0120000000002E8A000034737003',
    );
    expect(tableAddress('2001:db8:0:0:0:0:0:1', 'tcp6', false)).toBe(
      '20010DB8000000000000000000000001',
    );
    expect(tableAddress('fe80::1%eth0', 'tcp6', true)).toBe('000080FE000000000000000001000000');
  });

  test('an IPv4-mapped address in the IPv4 table is its IPv4 address', () => {
    expect(tableAddress('::ffff:127.0.0.1', 'tcp', true)).toBe('0100007F');
  });

  test('what is not an address of the family: null', () => {
    for (const bad of ['', 'x', '1.2.3', '1.2.3.4.5', '1.2.3.400', '::1', '1.2.3.-1']) {
      expect(tableAddress(bad, 'tcp', true)).toBeNull();
    }
    for (const bad of ['', '127.0.0.1', '1:2:3:4:5:6:7:8:9', '1::2::3', '::12345', 'g::1', ':::']) {
      expect(tableAddress(bad, 'tcp6', true)).toBeNull();
    }
  });
});

describe('parseTcpTable', () => {
  test('the queues of the wanted rows only, hexadecimal', () => {
    const rows = parseTcpTable(
      TCP6,
      new Set([`${MAPPED}:8E33 ${MAPPED}:A9BE`, `${LOOPBACK6}:C314 ${LOOPBACK6}:A0D3`]),
    );
    expect([...rows]).toEqual([
      [`${LOOPBACK6}:C314 ${LOOPBACK6}:A0D3`, { tx: 0, rx: 0x1f400 }],
      [`${MAPPED}:8E33 ${MAPPED}:A9BE`, { tx: 0x39dc00, rx: 0 }],
    ]);
  });

  test('a wide slot number, and rows that carry no connection (LISTEN, TIME_WAIT) are skipped', () => {
    const rows = parseTcpTable(
      TCP,
      new Set(['0100007F:A9BE 0100007F:8E33', '0100007F:0CEA 00000000:0000']),
    );
    expect([...rows]).toEqual([['0100007F:A9BE 0100007F:8E33', { tx: 0, rx: 128000 }]]);
  });

  test('empty, headless or cut-off text finds nothing', () => {
    const wanted = new Set(['0100007F:A9BE 0100007F:8E33']);
    expect(parseTcpTable('', wanted).size).toBe(0);
    expect(parseTcpTable(TCP.split('\n').slice(1).join('\n'), wanted).size).toBe(0);
    expect(
      parseTcpTable(`${TCP.split('\n')[0]}\n1214: 0100007F:A9BE 0100007F:8E33 01 0000`, wanted)
        .size,
    ).toBe(0);
  });
});

describe('clientProgress', () => {
  /** A server socket as Node describes it: its ends, and its bytes sent and still queued. */
  const socket = (local: string, localPort: number, remote: string, remotePort: number) =>
    ({
      localAddress: local,
      localPort,
      remoteAddress: remote,
      remotePort,
      remoteFamily: remote.includes(':') ? 'IPv6' : 'IPv4',
      _bytesDispatched: 5_000_000,
      _handle: { writeQueueSize: 1_080_128 },
    }) as unknown as Socket;
  const tables = (path: string) =>
    path.endsWith('/tcp') ? TCP : path.endsWith('/tcp6') ? TCP6 : null;
  const handed = 5_000_000 - 1_080_128;

  test('handed to the kernel, less unacknowledged, less what the client on this host has not read', () => {
    const mapped = socket('::ffff:127.0.0.1', 0x8e33, '::ffff:127.0.0.1', 0xa9be);
    const v6 = socket('::1', 0xa0d3, '::1', 0xc314);
    expect(clientProgress([mapped, v6, null], tables)).toEqual([
      { taken: handed - 0x39dc00 - 0x1f400, caughtUp: false },
      { taken: handed - 0x39dc00 - 0x1f400, caughtUp: false },
      null,
    ]);
  });

  test('a client elsewhere (no row of its own here): what it acknowledged', () => {
    const only = (path: string) => (path.endsWith('/tcp6') ? TCP6 : '');
    const mapped = socket('::ffff:127.0.0.1', 0x8e33, '::ffff:127.0.0.1', 0xa9be);
    expect(clientProgress([mapped], only)).toEqual([{ taken: handed - 0x39dc00, caughtUp: false }]);
  });

  test('nothing unacknowledged: caught up (it waits for us)', () => {
    const client = socket('127.0.0.1', 0xa9be, '127.0.0.1', 0x8e33);
    expect(clientProgress([client], tables)).toEqual([{ taken: handed, caughtUp: true }]);
  });

  test('no table (not Linux), no row, or not a TCP socket: unknown', () => {
    const mapped = socket('::ffff:127.0.0.1', 0x8e33, '::ffff:127.0.0.1', 0xa9be);
    expect(clientProgress([mapped], () => null)).toEqual([null]);
    expect(clientProgress([socket('127.0.0.1', 1, '127.0.0.1', 2)], tables)).toEqual([null]);
    const noHandle = { ...mapped, _handle: null } as unknown as Socket;
    expect(clientProgress([noHandle], tables)).toEqual([null]);
    const unix = { _bytesDispatched: 10, _handle: { writeQueueSize: 0 } } as unknown as Socket;
    expect(clientProgress([unix], tables)).toEqual([null]);
  });
});
