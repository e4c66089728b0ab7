import { redactUrl } from '../../../src/http/log-redaction.js';

describe('redactUrl', () => {
  test.each([
    ['/table/t/read', '/table/t/read'],
    ['/table/t/read?$top=1&$filter=a%20eq%201', '/table/t/read?$top=1&$filter=a%20eq%201'],
    ['/x?access_token=eyJ.abc.def', '/x?access_token=[redacted]'],
    ['/x?$top=1&ACCESS_TOKEN=abc&b=2', '/x?$top=1&ACCESS_TOKEN=[redacted]&b=2'],
    ['/x?access%5Ftoken=abc', '/x?access%5Ftoken=[redacted]'],
    [
      '/x?api-key=k&apikey=k&api_key=k',
      '/x?api-key=[redacted]&apikey=[redacted]&api_key=[redacted]',
    ],
    ['/x?token=a&jwt=b&password=c', '/x?token=[redacted]&jwt=[redacted]&password=[redacted]'],
    ['/x?token', '/x?token=[redacted]'],
    ['/x?tokens=1&my_password_hint=2', '/x?tokens=1&my_password_hint=2'],
    ['/x?%zz=1&token=%zz', '/x?%zz=1&token=[redacted]'],
    // A signed file link: the file and its expiry stay, the MAC does not.
    ['/@/a.png?exp=1767225600&sig=Xk3q0', '/@/a.png?exp=1767225600&sig=[redacted]'],
  ])('%s → %s', (url, expected) => {
    expect(redactUrl(url)).toBe(expected);
  });
});
