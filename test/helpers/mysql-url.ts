/** Where the test MySQL server is: a mysql:// URL in TABLEGATE_TEST_MYSQL_URL (set by global-setup). */
export interface ServerAddress {
  host: string;
  port: number;
  user: string;
  password: string;
}

export function parseMysqlUrl(url: string): ServerAddress {
  const parsed = new URL(url);
  return {
    host: parsed.hostname,
    port: Number(parsed.port || 3306),
    user: decodeURIComponent(parsed.username),
    password: decodeURIComponent(parsed.password),
  };
}

export function formatMysqlUrl(a: ServerAddress): string {
  return `mysql://${encodeURIComponent(a.user)}:${encodeURIComponent(a.password)}@${a.host}:${a.port}`;
}

export function testServer(): ServerAddress {
  const url = process.env.TABLEGATE_TEST_MYSQL_URL;
  if (!url)
    throw new Error(
      'TABLEGATE_TEST_MYSQL_URL is not set: run the tests through jest (global-setup finds a server)',
    );
  return parseMysqlUrl(url);
}
