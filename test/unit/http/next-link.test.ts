/**
 * The Link header of a paged read: only a full page has one; its URL is the request's with
 * `$skiptoken` in place of `$skip`; relative unless `--base-url` is set; a page sent before it
 * ended (past PAGE_HOLD_BYTES) skips the rest of itself by count; pages without a primary key
 * follow by count.
 */
import { describe, expect, test } from '@jest/globals';
import { NextLinks, nextQuery } from '../../../src/http/next-link.js';
import { compileRead } from '../../../src/pipeline/read.js';
import { bindingOf, Skiptokens } from '../../../src/pipeline/skiptoken.js';
import type { QueryObject } from '../../../src/query/options.js';
import { order, table, text } from '../fixtures/schema.js';

const tokens = new Skiptokens('s'.repeat(32));
const links = new NextLinks(tokens, null);

/** The link of `query`'s page after `rows` rows ending with `last`, and the token's position. */
function linkOf(query: QueryObject, rows: number, last: unknown[], ended = true, on = order) {
  const read = compileRead(on, query, null);
  const header = links.of(on, query, read)?.(rows, last, ended) ?? null;
  if (header === null) return { header, position: null };
  const url = new URL(
    (/^<([^>]*)>; rel="next"$/.exec(header) as RegExpExecArray)[1] as string,
    'http://h',
  );
  const token = url.searchParams.get('$skiptoken') as string;
  const binding = bindingOf(on.name, query, read.page?.signature ?? '');
  return { header, url, position: tokens.open(binding, token) };
}

describe('NextLinks', () => {
  const query = { $select: 'id,select', $orderby: 'select desc', $top: '2', $skip: '4' };

  test('a full page links to the same request with $skiptoken in place of $skip', () => {
    const { header, url, position } = linkOf(query, 2, [7, "O'Brien"]);
    expect(header).toMatch(
      /^<\/table\/order\/read\?\$select=id,select&\$orderby=select%20desc&\$top=2&\$skiptoken=[A-Za-z0-9_-]+>; rel="next"$/,
    );
    expect(url?.searchParams.get('$skip')).toBeNull();
    // After the last row by its sort keys: select, then the tie-breaker id.
    expect(position).toEqual({ skip: 0, after: ["O'Brien", '7'] });
  });

  test('a page with fewer rows than $top, or none, has no link; nor has $top=0 or no $top', () => {
    expect(linkOf(query, 1, [7, 'x']).header).toBeNull();
    expect(links.of(order, { $top: '0' }, compileRead(order, { $top: '0' }, null))).toBeNull();
    expect(links.of(order, {}, compileRead(order, {}, null))).toBeNull();
    expect(
      links.of(order, { $skiptoken: '' }, compileRead(order, { $skiptoken: '' }, null)),
    ).toBeNull();
  });

  test('a page sent before it ended skips the rest of itself after its last held row', () => {
    expect(linkOf({ ...query, $top: '10' }, 4, [9, 'm'], false).position).toEqual({
      skip: 6,
      after: ['m', '9'],
    });
  });

  test('without a primary key pages follow by count, from $skip or the token', () => {
    const loose = table('loose', [text('a')]);
    expect(linkOf({ $top: '3', $skip: '4' }, 3, ['x'], true, loose).position).toEqual({
      skip: 7,
      after: null,
    });
    // Counted from the token's position when continuing; before the page ends too.
    const read = compileRead(loose, { $top: '3', $skiptoken: '' }, null);
    const continued = { ...read, page: read.page && { ...read.page, skip: 30 } };
    const header = links.of(loose, { $top: '3' }, continued)?.(1, ['x'], false) as string;
    const token = new URL(header.slice(1, header.indexOf('>')), 'http://h').searchParams.get(
      '$skiptoken',
    ) as string;
    expect(tokens.open(bindingOf('loose', {}, 'count'), token)).toEqual({ skip: 33, after: null });
  });

  test('one compiled read brought again links each page after its own last row', () => {
    // The read cache hands the same compiled read to every request of one query string.
    const read = compileRead(order, query, null);
    const own = new NextLinks(tokens, null, (kept) => kept === read);
    const positionOf = (header: string) => {
      const url = new URL(header.slice(1, header.indexOf('>')), 'http://h');
      const binding = bindingOf(order.name, query, read.page?.signature ?? '');
      return tokens.open(binding, url.searchParams.get('$skiptoken') as string);
    };
    const first = own.of(order, query, read)?.(2, [7, 'a'], true) as string;
    const second = own.of(order, query, read)?.(2, [9, 'b'], true) as string;
    expect(first.slice(0, first.indexOf('$skiptoken='))).toBe(
      second.slice(0, second.indexOf('$skiptoken=')),
    );
    expect(positionOf(first)).toEqual({ skip: 0, after: ['a', '7'] });
    expect(positionOf(second)).toEqual({ skip: 0, after: ['b', '9'] });
    expect(own.of(order, query, read)?.(2, [7, 'a'], true)).toBe(first);
  });

  test('with --base-url the link is absolute and starts with it', () => {
    const absolute = new NextLinks(tokens, 'https://api.example.com/v1');
    const header = absolute.of(order, query, compileRead(order, query, null))?.(2, [1, 'a'], true);
    expect(header).toMatch(/^<https:\/\/api\.example\.com\/v1\/table\/order\/read\?\$select=/);
  });

  test('a table name is percent-encoded in the path', () => {
    const odd = table('odd name/ü', [text('a')], ['a']);
    const header = links.of(odd, { $top: '1' }, compileRead(odd, { $top: '1' }, null))?.(
      1,
      ['x'],
      true,
    );
    expect(header).toMatch(/^<\/table\/odd%20name%2F%C3%BC\/read\?\$top=1&\$skiptoken=/);
  });
});

describe('nextQuery', () => {
  test('keeps every other parameter in order, encoded so that it decodes to the same values', () => {
    const query = {
      $filter: "name eq 'a&b=c+d' and x gt 1",
      $skip: '10',
      $skiptoken: 'old',
      _: '17',
      tag: ['a', 'b c'],
      $top: '5',
    };
    const text = nextQuery(query, 'TOKEN');
    expect(text).toBe(
      "$filter=name%20eq%20'a%26b%3Dc%2Bd'%20and%20x%20gt%201&_=17&tag=a&tag=b%20c&$top=5&$skiptoken=TOKEN",
    );
    const back = new URLSearchParams(text);
    expect(back.get('$filter')).toBe(query.$filter);
    expect(back.getAll('tag')).toEqual(['a', 'b c']);
  });
});
