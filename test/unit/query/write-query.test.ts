import { describe, expect, test } from '@jest/globals';
import { parseKeyValue } from '../../../src/query/key-value.js';
import { parseWriteTarget } from '../../../src/query/write-query.js';

describe('parseWriteTarget', () => {
  const key = parseKeyValue('id,5');

  test('a key alone, or a $filter alone; other keys without $ are not ours', () => {
    expect(parseWriteTarget('update', key, { _: '1' })).toEqual({ kind: 'key', match: key });
    expect(parseWriteTarget('delete', null, { $filter: 'id eq 5', utm: 'x' })).toMatchObject({
      kind: 'filter',
      filter: { kind: 'compare', op: 'eq' },
    });
  });

  test.each<[Parameters<typeof parseWriteTarget>[2], boolean, string, string]>([
    [{ $filter: 'id eq 1' }, true, 'INVALID_QUERY', 'not both'],
    [{}, false, 'INVALID_QUERY', 'name the rows with a key'],
    [{ $filter: ' ' }, false, 'INVALID_QUERY', '$filter=true eq true'],
    [{ $filter: ['a eq 1', 'b eq 2'] }, false, 'INVALID_QUERY', 'more than once'],
    [{ $filter: 'id eq 1', $top: '1' }, false, 'INVALID_QUERY', "'$top'"],
    [{ filter: 'id eq 1' }, false, 'OPTION_WITHOUT_DOLLAR', "'$filter'"],
    [{ $filter: 'id eq' }, false, 'FILTER_SYNTAX', 'position'],
  ])('%j (key: %s): 400 %s', (query, withKey, code, message) => {
    expect(() => parseWriteTarget('update', withKey ? key : null, query)).toThrow(
      expect.objectContaining({ status: 400, code, message: expect.stringContaining(message) }),
    );
  });
});
