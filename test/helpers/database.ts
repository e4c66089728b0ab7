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
