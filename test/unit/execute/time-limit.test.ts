import { describe, expect, test } from '@jest/globals';
import { withTimeLimit } from '../../../src/execute/time-limit.js';

describe('withTimeLimit: a statement under a time limit of its own', () => {
  const select = { sql: 'SELECT `id` FROM `t` WHERE `name` LIKE ?', params: ['%x%'] };
  const insert = { sql: 'INSERT INTO `t` (`name`) VALUES (?)', params: ['x'] };

  test('MariaDB: SET STATEMENT max_statement_time (seconds) FOR any statement', () => {
    expect(withTimeLimit('mariadb', select, 1500)).toEqual({
      sql: 'SET STATEMENT max_statement_time = 1.5 FOR SELECT `id` FROM `t` WHERE `name` LIKE ?',
      params: ['%x%'],
    });
    expect(withTimeLimit('mariadb', insert, 5000)).toEqual({
      sql: 'SET STATEMENT max_statement_time = 5 FOR INSERT INTO `t` (`name`) VALUES (?)',
      params: ['x'],
    });
  });

  test('MySQL: the MAX_EXECUTION_TIME hint (milliseconds) on a SELECT; other statements as they are', () => {
    expect(withTimeLimit('mysql', select, 1500)).toEqual({
      sql: 'SELECT /*+ MAX_EXECUTION_TIME(1500) */ `id` FROM `t` WHERE `name` LIKE ?',
      params: ['%x%'],
    });
    expect(withTimeLimit('mysql', insert, 1500)).toBe(insert);
  });
});
