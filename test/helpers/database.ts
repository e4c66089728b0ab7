/**
 * A fresh database with a random name for one test file, created from SQL text, dropped after.
 */
import { randomBytes } from 'node:crypto';
import mysql from 'mysql2/promise';
import { testServer } from './mysql-url.js';

export interface TestDatabase {
  readonly name: string;
  /** A connection to it with multipleStatements, for setup and for checking what the gateway wrote. */
  readonly admin: mysql.Connection;
  drop(): Promise<void>;
}

export async function createTestDatabase(setupSql = ''): Promise<TestDatabase> {
  const server = testServer();
  const name = `tablegate_test_${randomBytes(6).toString('hex')}`;
  const admin = await mysql.createConnection({
    ...server,
    multipleStatements: true,
    dateStrings: true,
    supportBigNumbers: true,
    bigNumberStrings: true,
    timezone: 'Z',
    charset: 'utf8mb4_unicode_ci',
  });
  await admin.query(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
  await admin.query(`USE \`${name}\``);
  await admin.query("SET time_zone = '+00:00'");
  if (setupSql.trim()) await admin.query(setupSql);
  return {
    name,
    admin,
    drop: async () => {
      await admin.query(`DROP DATABASE IF EXISTS \`${name}\``);
      await admin.end();
    },
  };
}

const DIGITS =
  '(SELECT 0 AS d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9)';

/**
 * The integers 1…n (n ≤ 100,000) as a derived table with one column `seq`, for seeding rows:
 * `INSERT INTO t SELECT seq, … FROM ${integers(500)}`. MariaDB's `seq_1_to_N` tables do the same
 * on MariaDB only; this runs on MySQL too (the testcontainers run uses mysql:8.4).
 */
export function integers(n: number): string {
  if (!Number.isInteger(n) || n < 1 || n > 100_000) throw new Error(`integers(${n}): 1…100000`);
  const value = '1 + d0.d + 10 * d1.d + 100 * d2.d + 1000 * d3.d + 10000 * d4.d';
  const from = [0, 1, 2, 3, 4].map((i) => `${DIGITS} AS d${i}`).join(', ');
  return `(SELECT ${value} AS seq FROM ${from} WHERE ${value} <= ${n}) AS integers_1_to_${n}`;
}
