import { normalizeIP } from '@fastify/rate-limit';
import { clientAddress } from '../../../src/auth/limits.js';

describe('clientAddress', () => {
  // Its IPv4 shortcut gives what normalizeIP gives, for every kind of text request.ip can be.
  test.each([
    '127.0.0.1',
    '10.0.0.255',
    'UNKNOWN',
    '',
    '::1',
    '::ffff:192.0.2.1',
    '2001:db8:abcd:12:1:2:3:4',
    '2001:DB8::1',
    'fe80::1%eth0',
  ])('%j', (ip) => {
    expect(clientAddress(ip)).toBe(normalizeIP(ip, 64));
  });

  test('IPv6 clients are grouped by /64', () => {
    expect(clientAddress('2001:db8:0:1:aaaa::1')).toBe(clientAddress('2001:db8:0:1:bbbb::2'));
    expect(clientAddress('2001:db8:0:1::1')).not.toBe(clientAddress('2001:db8:0:2::1'));
  });
});
