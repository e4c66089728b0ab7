import { describe, expect, test } from '@jest/globals';
import { databasePatternMatches, executeGrants } from '../../../src/db/routine-grants.js';

const USAGE = "GRANT USAGE ON *.* TO `gw`@`%` IDENTIFIED BY PASSWORD '*D8218'";

describe('executeGrants: what SHOW GRANTS lets the user execute in the database', () => {
  test('EXECUTE on single routines: those, by kind, in any case', () => {
    const grants = executeGrants(
      [
        USAGE,
        'GRANT SELECT, INSERT ON `shop`.* TO `gw`@`%`',
        'GRANT EXECUTE ON PROCEDURE `shop`.`place_order` TO `gw`@`%`',
        'GRANT EXECUTE, ALTER ROUTINE ON FUNCTION `shop`.`Balance` TO `gw`@`%`',
        'GRANT EXECUTE ON PROCEDURE `other`.`report` TO `gw`@`%`',
      ],
      'shop',
    );
    expect(grants.may('procedure', 'place_order')).toBe(true);
    expect(grants.may('procedure', 'PLACE_ORDER')).toBe(true);
    expect(grants.may('function', 'balance')).toBe(true);
    expect(grants.may('function', 'place_order')).toBe(false);
    expect(grants.may('procedure', 'balance')).toBe(false);
    expect(grants.may('procedure', 'report')).toBe(false);
  });

  test.each([
    ['GRANT ALL PRIVILEGES ON *.* TO `root`@`localhost` WITH GRANT OPTION'],
    ['GRANT EXECUTE ON *.* TO `gw`@`%`'],
    ['GRANT SELECT, EXECUTE ON `shop`.* TO `gw`@`%`'],
    ['GRANT ALL PRIVILEGES ON `shop`.* TO `gw`@`%`'],
    ['GRANT EXECUTE ON `sh_p`.* TO `gw`@`%`'],
    ['GRANT EXECUTE ON `s%`.* TO `gw`@`%`'],
    // A role (its privileges are not listed), a revoke: not read whole, so everything listed.
    ['GRANT `app_role` TO `gw`@`%`'],
    ['GRANT `app_role`@`%` TO `gw`@`%`'],
    ['REVOKE EXECUTE ON `shop`.* FROM `gw`@`%`'],
    ['GRANT EXECUTE ON PACKAGE `shop`.`pkg` TO `gw`@`%`'],
  ])('%s: every routine', (line) => {
    const grants = executeGrants([USAGE, line], 'shop');
    expect(grants.may('procedure', 'anything')).toBe(true);
    expect(grants.may('function', 'anything')).toBe(true);
  });

  test.each([
    ['GRANT SELECT ON *.* TO `gw`@`%`'],
    ['GRANT SELECT, CREATE ROUTINE, ALTER ROUTINE ON `shop`.* TO `gw`@`%`'],
    ['GRANT EXECUTE ON `shops`.* TO `gw`@`%`'],
    ['GRANT EXECUTE ON `sh\\_p`.* TO `gw`@`%`', 'shxp'],
    ['GRANT SELECT (`execute`, ` ON `) ON `shop`.`t` TO `gw`@`%`'],
    ["GRANT PROXY ON ''@'%' TO 'gw'@'%'"],
    ['SET DEFAULT ROLE NONE FOR `gw`@`%`'],
  ])('%s: nothing', (line, database = 'shop') => {
    const grants = executeGrants([USAGE, line], database);
    expect(grants.may('procedure', 'anything')).toBe(false);
  });

  test("MariaDB's default role is listed with its grants: they count", () => {
    const grants = executeGrants(
      [
        USAGE,
        'GRANT EXECUTE ON `shop`.* TO `app_role`',
        'SET DEFAULT ROLE `app_role` FOR `gw`@`%`',
      ],
      'shop',
    );
    expect(grants.may('function', 'f')).toBe(true);
  });

  test('a routine whose name holds a backquote', () => {
    const grants = executeGrants(
      ['GRANT EXECUTE ON PROCEDURE `shop`.`we``ird` TO `gw`@`%`'],
      'shop',
    );
    expect(grants.may('procedure', 'we`ird')).toBe(true);
  });
});

test.each([
  ['shop', 'shop', true],
  ['shop', 'Shop', false],
  ['sh_p', 'shxp', true],
  ['sh\\_p', 'sh_p', true],
  ['sh\\_p', 'shxp', false],
  ['s%', 'shop', true],
  ['%', '', true],
  ['s.p', 'shop', false],
  ['s.o[p]', 's.o[p]', true],
])('database pattern %s matches %s: %s', (pattern, name, matches) => {
  expect(databasePatternMatches(pattern, name)).toBe(matches);
});
