/**
 * The paths Swagger UI shows (http/docs-ui.ts): a name percent-encoded in the description is
 * shown as written, but for what would read as more of the path.
 */
import { tablegatePathsPlugin } from '../../../src/http/docs-ui.js';

const { readablePath } = tablegatePathsPlugin().fn;

describe('readablePath', () => {
  test.each([
    ['/table/orders/read', '/table/orders/read'],
    ['/table/zip%20codes/read', '/table/zip codes/read'],
    ['/table/gr%C3%B6%C3%9Fe/read({key},{value})', '/table/größe/read({key},{value})'],
    ['/rpc/%E5%90%8D%E5%89%8D', '/rpc/名前'],
    ["/table/say%20%22hi%22%20it's/read", '/table/say "hi" it\'s/read'],
    ['/table/a%2Bb%26c%3Dd%3Ae%40f/create', '/table/a+b&c=d:e@f/create'],
  ])('%s is shown as %s', (path, shown) => {
    expect(readablePath(path)).toBe(shown);
  });

  test.each([
    // A slash, ? or # in a name would read as another segment, a query or a fragment.
    ['/table/a%2Fb/read', '/table/a%2Fb/read'],
    ['/table/a%3Fb%23c/read', '/table/a%3Fb%23c/read'],
    // %, { and } keep escapes and templates apart from names.
    ['/table/100%25%20sure/read', '/table/100%25 sure/read'],
    ['/table/%7Bkey%7D/read({key},{value})', '/table/%7Bkey%7D/read({key},{value})'],
    // Characters no reader could see or tell from a space.
    ['/table/tab%09here/read', '/table/tab%09here/read'],
    ['/table/no%C2%A0break/read', '/table/no%C2%A0break/read'],
    ['/table/zero%E2%80%8Bwidth/read', '/table/zero%E2%80%8Bwidth/read'],
    // Not UTF-8: left as it is.
    ['/table/bad%FF/read', '/table/bad%FF/read'],
  ])('%s stays %s', (path, shown) => {
    expect(readablePath(path)).toBe(shown);
  });
});
