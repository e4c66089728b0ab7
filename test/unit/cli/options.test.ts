import os from 'node:os';
import path from 'node:path';
import {
  configFromRun,
  parseDuration,
  parseHosts,
  parseSize,
  parseTrustProxy,
  UsageError,
} from '../../../src/cli/options.js';

const FLAGS = {
  host: 'db',
  user: 'app',
  password: '',
  port: '3306',
  database: 'shop',
  listen: '8080',
};

describe('configFromRun', () => {
  test('the six flags make an open-mode config with the documented defaults', () => {
    const config = configFromRun([], FLAGS, {});
    expect(config).toEqual({
      mode: 'open',
      db: { host: 'db', user: 'app', password: '', port: 3306, database: 'shop', poolSize: 10 },
      listenPort: 8080,
      listenHost: '0.0.0.0',
      baseUrl: null,
      jwtSecret: null,
      tokenTtlSeconds: 3600,
      stateDir: path.join(os.homedir(), '.tablegate'),
      uploadsDir: path.join(os.homedir(), '.tablegate', 'uploads'),
      maxFileSize: 100 * 1024 * 1024,
      maxFiles: 20,
      mcpMaxRows: 100,
      odataMaxPage: 1000,
      bodyLimit: 1024 * 1024,
      corsOrigin: '*',
      logLevel: 'info',
      queryTimeoutMs: 30_000,
      stallTimeoutMs: 30_000,
      schemaRefreshMs: 1000,
      registration: 'open',
      defaultRole: 'user',
      policyFile: null,
      trustProxy: false,
      maxClientRequests: 0,
      anonymousQueryTimeoutMs: null,
      minReadRate: 4096,
      maxAnswerBytes: 64 * 1024 * 1024,
      bodyTimeoutMs: 30_000,
      maxConnections: 900,
      metricsPort: null,
      metricsHost: '127.0.0.1',
      redisUrl: null,
      shutdownDelayMs: 0,
      readConsistency: 'eventual',
      skiptokenSecret: null,
      identityProvider: null,
      fileUrlTtlSeconds: 3600,
      csvFormulas: 'escape',
    });
  });

  test('--csv-formulas or TABLEGATE_CSV_FORMULAS: escape or keep, a flag winning', () => {
    expect(configFromRun([], { ...FLAGS, csvFormulas: 'keep' }, {}).csvFormulas).toBe('keep');
    expect(configFromRun([], FLAGS, { TABLEGATE_CSV_FORMULAS: 'Keep' }).csvFormulas).toBe('keep');
    expect(
      configFromRun([], { ...FLAGS, csvFormulas: 'escape' }, { TABLEGATE_CSV_FORMULAS: 'keep' })
        .csvFormulas,
    ).toBe('escape');
    for (const bad of ['', 'off', 'quote']) {
      expect(() => configFromRun([], { ...FLAGS, csvFormulas: bad }, {})).toThrow(
        new UsageError(`--csv-formulas must be escape or keep, got '${bad}'`),
      );
    }
  });

  test('--shutdown-delay or TABLEGATE_SHUTDOWN_DELAY: a duration, 0 allowed, a flag winning', () => {
    expect(configFromRun([], { ...FLAGS, shutdownDelay: '2s' }, {}).shutdownDelayMs).toBe(2000);
    expect(configFromRun([], { ...FLAGS, shutdownDelay: '0' }, {}).shutdownDelayMs).toBe(0);
    expect(configFromRun([], FLAGS, { TABLEGATE_SHUTDOWN_DELAY: '500ms' }).shutdownDelayMs).toBe(
      500,
    );
    expect(
      configFromRun([], { ...FLAGS, shutdownDelay: '3s' }, { TABLEGATE_SHUTDOWN_DELAY: '1s' })
        .shutdownDelayMs,
    ).toBe(3000);
    for (const bad of ['-1s', 'soon', '2h']) {
      expect(() => configFromRun([], { ...FLAGS, shutdownDelay: bad }, {})).toThrow(
        `--shutdown-delay must be a duration like 30s, 500ms or 2m, got '${bad}'`,
      );
    }
  });

  test('--max-read-cost and --max-read-cost-anonymous: whole numbers or off, from flag or env', () => {
    expect(configFromRun([], { ...FLAGS, maxReadCost: '2000000' }, {}).maxReadCost).toBe(2_000_000);
    expect(configFromRun([], { ...FLAGS, maxReadCost: 'off' }, {}).maxReadCost).toBe(0);
    expect(configFromRun([], { ...FLAGS, maxReadCost: '0' }, {}).maxReadCost).toBe(0);
    expect(
      configFromRun([], FLAGS, { TABLEGATE_MAX_READ_COST_ANONYMOUS: '5000' }).maxReadCostAnonymous,
    ).toBe(5000);
    expect(
      configFromRun([], { ...FLAGS, maxReadCost: '7' }, { TABLEGATE_MAX_READ_COST: '9' })
        .maxReadCost,
    ).toBe(7);
    for (const bad of ['-1', 'lots', '1e6', '1000000000001']) {
      expect(() => configFromRun([], { ...FLAGS, maxReadCost: bad }, {})).toThrow(
        new UsageError(
          `--max-read-cost must be a whole number from 0 to 1000000000000, got '${bad}'`,
        ),
      );
    }
    expect(() => configFromRun([], { ...FLAGS, maxReadCostAnonymous: 'x' }, {})).toThrow(
      new UsageError(
        "--max-read-cost-anonymous must be a whole number from 0 to 1000000000000, got 'x'",
      ),
    );
  });

  test('--change-feed and --feed-max-lag, or their variables; absent: the defaults', () => {
    expect(configFromRun([], { ...FLAGS, changeFeed: 'ON' }, {}).changeFeed).toBe('on');
    expect(configFromRun([], FLAGS, { TABLEGATE_CHANGE_FEED: 'off' }).changeFeed).toBe('off');
    expect(configFromRun([], FLAGS, {}).changeFeed).toBeUndefined();
    expect(configFromRun([], { ...FLAGS, feedMaxLag: '50' }, {}).feedMaxLag).toBe(50);
    expect(() => configFromRun([], { ...FLAGS, changeFeed: 'maybe' }, {})).toThrow(
      new UsageError("--change-feed must be auto, on or off, got 'maybe'"),
    );
    expect(() => configFromRun([], { ...FLAGS, feedMaxLag: '0' }, {})).toThrow(UsageError);
  });

  test('--read-consistency or TABLEGATE_READ_CONSISTENCY: eventual, session or strict', () => {
    expect(configFromRun([], { ...FLAGS, readConsistency: 'session' }, {}).readConsistency).toBe(
      'session',
    );
    expect(configFromRun([], FLAGS, { TABLEGATE_READ_CONSISTENCY: 'Strict' }).readConsistency).toBe(
      'strict',
    );
    expect(
      configFromRun(
        [],
        { ...FLAGS, readConsistency: 'eventual' },
        { TABLEGATE_READ_CONSISTENCY: 'strict' },
      ).readConsistency,
    ).toBe('eventual');
    for (const bad of ['', 'linearizable', 'causal']) {
      expect(() => configFromRun([], { ...FLAGS, readConsistency: bad }, {})).toThrow(
        new UsageError(`--read-consistency must be eventual, session or strict, got '${bad}'`),
      );
    }
  });

  test('--redis-url or TABLEGATE_REDIS_URL: a redis:// or rediss:// URL, a flag winning', () => {
    const url = 'redis://:secret@cache:6379/2';
    expect(configFromRun(['auth'], { ...FLAGS, redisUrl: url }, {}).redisUrl).toBe(url);
    expect(configFromRun(['auth'], FLAGS, { TABLEGATE_REDIS_URL: 'rediss://cache' }).redisUrl).toBe(
      'rediss://cache',
    );
    expect(
      configFromRun(['auth'], { ...FLAGS, redisUrl: url }, { TABLEGATE_REDIS_URL: 'redis://other' })
        .redisUrl,
    ).toBe(url);
    for (const wrong of ['cache:6379', 'http://cache', '', 'redis://']) {
      expect(() => configFromRun(['auth'], { ...FLAGS, redisUrl: wrong }, {})).toThrow(
        new UsageError(`--redis-url must start with redis:// or rediss://, got '${wrong}'`),
      );
    }
  });

  test("'auth' or TABLEGATE_AUTH=true selects auth mode", () => {
    expect(configFromRun(['auth'], FLAGS, {}).mode).toBe('auth');
    expect(configFromRun([], FLAGS, { TABLEGATE_AUTH: 'true' }).mode).toBe('auth');
    expect(configFromRun([], FLAGS, { TABLEGATE_AUTH: 'false' }).mode).toBe('open');
  });

  test('environment variables stand in for flags, and a flag wins', () => {
    const env = {
      TABLEGATE_DB_HOST: 'envhost',
      TABLEGATE_DB_USER: 'envuser',
      TABLEGATE_DB_PASSWORD: 's3cret',
      TABLEGATE_DB_PORT: '3307',
      TABLEGATE_DB_NAME: 'envdb',
      TABLEGATE_LISTEN_PORT: '9090',
      TABLEGATE_MAX_FILE_SIZE: '2MiB',
    };
    const fromEnv = configFromRun([], {}, env);
    expect(fromEnv.db).toEqual({
      host: 'envhost',
      user: 'envuser',
      password: 's3cret',
      port: 3307,
      database: 'envdb',
      poolSize: 10,
    });
    expect(fromEnv.listenPort).toBe(9090);
    expect(fromEnv.maxFileSize).toBe(2 * 1024 * 1024);
    expect(configFromRun([], { host: 'flaghost' }, env).db.host).toBe('flaghost');
  });

  test.each([
    [{ ...FLAGS, host: undefined }, 'missing required option -h/--host (or TABLEGATE_DB_HOST)'],
    [{ ...FLAGS, user: '' }, 'missing required option -u/--user (or TABLEGATE_DB_USER)'],
    [
      { ...FLAGS, password: undefined },
      'missing required option -p/--password (or TABLEGATE_DB_PASSWORD)',
    ],
    [
      { ...FLAGS, database: undefined },
      'missing required option -D/--database (or TABLEGATE_DB_NAME)',
    ],
    [
      { ...FLAGS, listen: undefined },
      'missing required option -o/--listen (or TABLEGATE_LISTEN_PORT)',
    ],
    [{ ...FLAGS, port: 'abc' }, "-P/--port must be a whole number from 1 to 65535, got 'abc'"],
    [{ ...FLAGS, port: '70000' }, "-P/--port must be a whole number from 1 to 65535, got '70000'"],
    [{ ...FLAGS, listen: '-1' }, "-o/--listen must be a whole number from 0 to 65535, got '-1'"],
  ])('%p is a usage error', (flags, message) => {
    expect(() => configFromRun([], flags, {})).toThrow(new UsageError(message));
  });

  test('a stray word after run is a usage error', () => {
    expect(() => configFromRun(['auht'], FLAGS, {})).toThrow(
      "unexpected argument 'auht' after 'run'",
    );
  });
});

describe('-h with several hosts', () => {
  const port = () => 3306;

  test('hosts with and without their own port, IPv6 in brackets or bare', () => {
    expect(parseHosts('db1, db2:3307,10.0.0.5:3308,[::1]:3309,[fe80::2],::3', port)).toEqual([
      { host: 'db1', port: 3306 },
      { host: 'db2', port: 3307 },
      { host: '10.0.0.5', port: 3308 },
      { host: '::1', port: 3309 },
      { host: 'fe80::2', port: 3306 },
      { host: '::3', port: 3306 },
    ]);
  });

  test('the first host is host and port, the others otherHosts; one host has none', () => {
    expect(configFromRun([], { ...FLAGS, host: 'db1,db2:3307' }, {}).db).toEqual({
      host: 'db1',
      port: 3306,
      otherHosts: [{ host: 'db2', port: 3307 }],
      user: 'app',
      password: '',
      database: 'shop',
      poolSize: 10,
    });
    expect(configFromRun([], FLAGS, { TABLEGATE_DB_HOST: 'x,y' }).db.otherHosts).toBeUndefined();
    expect(
      configFromRun([], { ...FLAGS, host: undefined }, { TABLEGATE_DB_HOST: 'x,y:1' }).db
        .otherHosts,
    ).toEqual([{ host: 'y', port: 1 }]);
  });

  test('-P is needed only by a host without a port, and checked when given', () => {
    const noPort = { ...FLAGS, port: undefined };
    expect(configFromRun([], { ...noPort, host: 'a:1,b:2' }, {}).db).toMatchObject({
      host: 'a',
      port: 1,
      otherHosts: [{ host: 'b', port: 2 }],
    });
    expect(() => configFromRun([], { ...noPort, host: 'a:1,b' }, {})).toThrow(
      new UsageError('missing required option -P/--port (or TABLEGATE_DB_PORT)'),
    );
    expect(() => configFromRun([], { ...FLAGS, host: 'a:1', port: 'x' }, {})).toThrow(
      new UsageError("-P/--port must be a whole number from 1 to 65535, got 'x'"),
    );
  });

  test.each([
    ['db1,,db2', "-h/--host 'db1,,db2': an empty entry (write hosts as db1,db2:3307)"],
    ['db1,', "-h/--host 'db1,': an empty entry (write hosts as db1,db2:3307)"],
    ['db1:0', "-h/--host 'db1:0': the port of 'db1:0' must be a whole number from 1 to 65535"],
    [
      'db1:70000',
      "-h/--host 'db1:70000': the port of 'db1:70000' must be a whole number from 1 to 65535",
    ],
    ['db1:', "-h/--host 'db1:': the port of 'db1:' must be a whole number from 1 to 65535"],
    ['db1:x', "-h/--host 'db1:x': the port of 'db1:x' must be a whole number from 1 to 65535"],
    [':3306', "-h/--host ':3306': ':3306' names no host"],
    ['db1,db1:3306', "-h/--host 'db1,db1:3306': db1:3306 is named twice"],
    ['[::1]:3306,[::1]', "-h/--host '[::1]:3306,[::1]': [::1]:3306 is named twice"],
    [
      '[::1:3306',
      "-h/--host '[::1:3306': '[::1:3306' is not an IPv6 address in brackets like [::1]:3306",
    ],
    [
      '[db1]:3306',
      "-h/--host '[db1]:3306': '[db1]:3306' is not an IPv6 address in brackets like [::1]:3306",
    ],
    [
      '[::1]3306',
      "-h/--host '[::1]3306': '[::1]3306' is not an IPv6 address in brackets like [::1]:3306",
    ],
    [
      'db1]',
      "-h/--host 'db1]': 'db1]' has a stray bracket (an IPv6 address is written [::1]:3306)",
    ],
    [
      'db1:3306:1',
      "-h/--host 'db1:3306:1': 'db1:3306:1' is not a host or host:port (an IPv6 address takes brackets: [::1]:3306)",
    ],
  ])('-h %p is a usage error', (host, message) => {
    expect(() => configFromRun([], { ...FLAGS, host }, {})).toThrow(new UsageError(message));
  });
});

describe('who may do what', () => {
  test('--registration, --default-role and --policy, from flags or the environment', () => {
    const config = configFromRun(
      ['auth'],
      { ...FLAGS, registration: 'CLOSED', policy: 'p.yaml' },
      {
        TABLEGATE_DEFAULT_ROLE: 'guest',
      },
    );
    expect(config.registration).toBe('closed');
    expect(config.defaultRole).toBe('guest');
    expect(config.policyFile).toBe(path.resolve('p.yaml'));
    expect(configFromRun([], FLAGS, { TABLEGATE_POLICY: '/etc/p.json' }).policyFile).toBe(
      '/etc/p.json',
    );
  });

  test.each<[Record<string, string>, string]>([
    [{ registration: 'maybe' }, "--registration must be open or closed, got 'maybe'"],
    [{ defaultRole: '' }, "--default-role '': a role is 1 to 64 characters long"],
    [{ defaultRole: 'a b' }, "--default-role 'a b': a role holds no spaces or control characters"],
    [{ policy: '' }, '--policy needs a file name'],
  ])('%j is a usage error', (flags, message) => {
    expect(() => configFromRun(['auth'], { ...FLAGS, ...flags }, {})).toThrow(
      new UsageError(message),
    );
  });
});

describe('auth options', () => {
  const auth = (flags: Record<string, string>, env: Record<string, string> = {}) =>
    configFromRun(['auth'], { ...FLAGS, ...flags }, env);

  test.each([
    ['3600', 3600],
    ['90', 90],
    [' 90 ', 90],
    ['90s', 90],
    ['15m', 900],
    ['1h', 3600],
    ['1.5h', 5400],
    ['2d', 172_800],
    ['2 days', 172_800],
    ['1 week', 604_800],
    ['1y', 31_557_600],
  ])('--token-ttl %j is %d seconds; --file-url-ttl the same', (text, seconds) => {
    expect(auth({ tokenTtl: text }).tokenTtlSeconds).toBe(seconds);
    expect(auth({ fileUrlTtl: text }).fileUrlTtlSeconds).toBe(seconds);
  });

  test.each(['forever', 'soon', '', '0', '-1h', '500ms', '0.5s', '1 fortnight', '11y'])(
    '--token-ttl %j is a usage error (exit 2), not a start-up failure',
    (text) => {
      expect(() => auth({ tokenTtl: text })).toThrow(
        new UsageError(
          `--token-ttl must be a duration like 1h, 30m, 7d or 3600 (seconds), got '${text}'`,
        ),
      );
      expect(() => auth({}, { TABLEGATE_FILE_URL_TTL: text })).toThrow(
        new UsageError(
          `--file-url-ttl must be a duration like 1h, 30m, 7d or 3600 (seconds), got '${text}'`,
        ),
      );
    },
  );

  test('--jwt-secret shorter than 32 bytes is a usage error that does not echo it', () => {
    expect(auth({ jwtSecret: 'x'.repeat(32) }).jwtSecret).toBe('x'.repeat(32));
    const attempt = () => auth({}, { TABLEGATE_JWT_SECRET: 'short-secret' });
    expect(attempt).toThrow(
      new UsageError('--jwt-secret (or TABLEGATE_JWT_SECRET) must be at least 32 bytes; it is 12'),
    );
    expect(attempt).not.toThrow(/short-secret/);
    // Bytes, not characters.
    expect(auth({ jwtSecret: '€'.repeat(11) }).jwtSecret).toBe('€'.repeat(11));
  });

  test.each<[Record<string, string>, Record<string, string>, string]>([
    [{ jwtSecret: 'x'.repeat(32) }, {}, '--jwt-secret'],
    [{ tokenTtl: '1h' }, {}, '--token-ttl'],
    [{ registration: 'closed' }, {}, '--registration'],
    [{ defaultRole: 'user' }, {}, '--default-role'],
    [{ redisUrl: 'redis://cache' }, {}, '--redis-url'],
    [{ jwksUrl: 'https://sso.example.com/certs' }, {}, '--jwks-url'],
    [{ jwtPublicKey: 'key.pem' }, {}, '--jwt-public-key'],
    [{ jwtIssuer: 'https://sso.example.com' }, {}, '--jwt-issuer'],
    [{ jwtAudience: 'shop' }, {}, '--jwt-audience'],
    [{ roleClaim: 'roles' }, {}, '--role-claim'],
    [{ userIdClaim: 'oid' }, {}, '--user-id-claim'],
    [{ emailClaim: 'upn' }, {}, '--email-claim'],
    [{ fileUrlTtl: '5m' }, {}, '--file-url-ttl'],
    [{}, { TABLEGATE_JWT_SECRET: 'x'.repeat(32) }, 'TABLEGATE_JWT_SECRET'],
    [{}, { TABLEGATE_JWKS_URL: 'https://sso.example.com/certs' }, 'TABLEGATE_JWKS_URL'],
  ])('open mode: %j %j is a usage error naming %s', (flags, env, named) => {
    expect(() => configFromRun([], { ...FLAGS, ...flags }, env)).toThrow(
      new UsageError(
        `${named} is for auth mode: run 'tablegate run auth …' (or set TABLEGATE_AUTH=true), or leave it out`,
      ),
    );
  });

  test('--jwks-url with issuer and audience: a provider with the default claims', () => {
    expect(
      auth({
        jwksUrl: 'https://sso.example.com/realms/shop/protocol/openid-connect/certs',
        jwtIssuer: 'https://sso.example.com/realms/shop',
        jwtAudience: 'shop-api',
      }).identityProvider,
    ).toEqual({
      jwksUrl: 'https://sso.example.com/realms/shop/protocol/openid-connect/certs',
      publicKeyFile: null,
      issuer: 'https://sso.example.com/realms/shop',
      audience: 'shop-api',
      claims: { userId: 'sub', email: 'email', role: 'role' },
    });
  });

  test('--jwt-public-key and the claim options, from the environment too', () => {
    expect(
      auth(
        { jwtPublicKey: 'keys/idp.pem', roleClaim: 'https://example.com/roles' },
        {
          TABLEGATE_JWT_ISSUER: 'https://tenant.auth0.com/',
          TABLEGATE_JWT_AUDIENCE: 'https://api.example.com',
          TABLEGATE_USER_ID_CLAIM: 'https://example.com/user_id',
          TABLEGATE_EMAIL_CLAIM: 'https://example.com/email',
        },
      ).identityProvider,
    ).toEqual({
      jwksUrl: null,
      publicKeyFile: path.resolve('keys/idp.pem'),
      issuer: 'https://tenant.auth0.com/',
      audience: 'https://api.example.com',
      claims: {
        userId: 'https://example.com/user_id',
        email: 'https://example.com/email',
        role: 'https://example.com/roles',
      },
    });
  });

  const provider = { jwksUrl: 'https://sso.example.com/certs', jwtIssuer: 'i', jwtAudience: 'a' };
  test.each<[Record<string, string>, string]>([
    [{ ...provider, jwtPublicKey: 'key.pem' }, 'give --jwks-url or --jwt-public-key, not both'],
    [
      { jwksUrl: 'https://sso.example.com/certs', jwtAudience: 'a' },
      '--jwt-issuer is required with --jwks-url: tokens are accepted only when their iss names it',
    ],
    [
      { jwtPublicKey: 'key.pem', jwtIssuer: 'i' },
      '--jwt-audience is required with --jwt-public-key: tokens are accepted only when their aud names it',
    ],
    [
      { jwtIssuer: 'i', jwtAudience: 'a' },
      "--jwt-issuer is for an identity provider's tokens: give --jwks-url or --jwt-public-key too",
    ],
    [
      { roleClaim: 'realm_access.roles' },
      "--role-claim is for an identity provider's tokens: give --jwks-url or --jwt-public-key too",
    ],
    [
      { ...provider, jwksUrl: 'sso.example.com/certs' },
      "--jwks-url must be an http:// or https:// URL, got 'sso.example.com/certs'",
    ],
    [
      { ...provider, jwksUrl: 'file:///etc/keys.json' },
      "--jwks-url must be an http:// or https:// URL, got 'file:///etc/keys.json'",
    ],
    [{ ...provider, roleClaim: ' ' }, '--role-claim needs a claim name or path'],
  ])('%j is a usage error', (flags, message) => {
    expect(() => auth(flags)).toThrow(new UsageError(message));
  });
});

describe('sizes and durations', () => {
  test.each([
    ['1048576', 1048576],
    ['512KiB', 512 * 1024],
    ['100MiB', 100 * 1024 * 1024],
    ['2GB', 2e9],
    ['1.5m', 1.5 * 1024 * 1024],
  ])('size %s = %d bytes', (text, bytes) => {
    expect(parseSize('maxFileSize', text)).toBe(bytes);
  });

  test.each(['', 'lots', '10XB', '-5', '0'])('size %p is refused', (text) => {
    expect(() => parseSize('maxFileSize', text)).toThrow(UsageError);
  });

  test.each([
    ['30', 30_000],
    ['30s', 30_000],
    ['500ms', 500],
    ['2m', 120_000],
  ])('duration %s = %d ms', (text, ms) => {
    expect(parseDuration('queryTimeout', text)).toBe(ms);
  });
});

describe('--trust-proxy', () => {
  test.each([
    ['false', false],
    ['', false],
    ['0', false],
    ['true', true],
    ['TRUE', true],
    ['1', 1],
    ['2', 2],
    ['10.0.0.0/8', ['10.0.0.0/8']],
    ['127.0.0.1, 10.1.2.3', ['127.0.0.1', '10.1.2.3']],
    ['loopback,uniquelocal,fd00::/8,::1', ['loopback', 'uniquelocal', 'fd00::/8', '::1']],
  ])('%p → %p', (text, expected) => {
    expect(parseTrustProxy(text)).toEqual(expected);
  });

  test.each(['yes', '10.0.0.0/33', '10.0.0/8', 'fd00::/129', '10.0.0.1/8/8', 'proxy.local', '1,2'])(
    '%p is a usage error naming the option',
    (text) => {
      expect(() => parseTrustProxy(text)).toThrow(UsageError);
      expect(() => parseTrustProxy(text)).toThrow(/^--trust-proxy /);
    },
  );

  test('from the flag or TABLEGATE_TRUST_PROXY; off by default', () => {
    expect(configFromRun([], FLAGS, {}).trustProxy).toBe(false);
    expect(configFromRun([], FLAGS, { TABLEGATE_TRUST_PROXY: '1' }).trustProxy).toBe(1);
    expect(configFromRun([], { ...FLAGS, trustProxy: 'loopback' }, {}).trustProxy).toEqual([
      'loopback',
    ]);
  });
});

describe('load bounds', () => {
  test('--max-client-requests, --body-timeout, --max-connections and their variables', () => {
    const config = configFromRun(
      [],
      { ...FLAGS, maxClientRequests: '0', bodyTimeout: '5s' },
      { TABLEGATE_MAX_CONNECTIONS: '100' },
    );
    expect(config.maxClientRequests).toBe(0);
    expect(config.bodyTimeoutMs).toBe(5000);
    expect(config.maxConnections).toBe(100);
    expect(() => configFromRun([], { ...FLAGS, maxConnections: '0' }, {})).toThrow(
      '--max-connections must be a whole number from 1 to 1000000',
    );
  });
});

describe('what one caller may cost', () => {
  test('--anonymous-query-timeout or its variable: a duration; absent, the query timeout applies', () => {
    expect(configFromRun([], FLAGS, {}).anonymousQueryTimeoutMs).toBeNull();
    expect(
      configFromRun([], { ...FLAGS, anonymousQueryTimeout: '5s' }, {}).anonymousQueryTimeoutMs,
    ).toBe(5000);
    expect(
      configFromRun([], FLAGS, { TABLEGATE_ANONYMOUS_QUERY_TIMEOUT: '1500ms' })
        .anonymousQueryTimeoutMs,
    ).toBe(1500);
    for (const bad of ['0', 'soon', '-1s']) {
      expect(() => configFromRun([], { ...FLAGS, anonymousQueryTimeout: bad }, {})).toThrow(
        `--anonymous-query-timeout must be a duration like 30s, 500ms or 2m, got '${bad}'`,
      );
    }
  });

  test('--max-answer-bytes or its variable: a size', () => {
    expect(configFromRun([], { ...FLAGS, maxAnswerBytes: '1MiB' }, {}).maxAnswerBytes).toBe(
      1024 * 1024,
    );
    expect(configFromRun([], FLAGS, { TABLEGATE_MAX_ANSWER_BYTES: '500000' }).maxAnswerBytes).toBe(
      500_000,
    );
    expect(() => configFromRun([], { ...FLAGS, maxAnswerBytes: '0' }, {})).toThrow(
      "--max-answer-bytes must be a size like 1048576, 512KiB or 100MiB, got '0'",
    );
  });

  test('--min-read-rate or its variable: bytes a second as a size; 0 turns it off', () => {
    expect(configFromRun([], { ...FLAGS, minReadRate: '64KiB' }, {}).minReadRate).toBe(65536);
    expect(configFromRun([], FLAGS, { TABLEGATE_MIN_READ_RATE: '1000' }).minReadRate).toBe(1000);
    expect(configFromRun([], { ...FLAGS, minReadRate: '0' }, {}).minReadRate).toBe(0);
    expect(() => configFromRun([], { ...FLAGS, minReadRate: 'fast' }, {})).toThrow(
      "--min-read-rate must be a size like 1048576, 512KiB or 100MiB, got 'fast'",
    );
  });
});

describe('metrics', () => {
  test('--metrics-port and --metrics-host, or their variables; off and loopback by default', () => {
    expect(configFromRun([], FLAGS, {})).toMatchObject({
      metricsPort: null,
      metricsHost: '127.0.0.1',
    });
    expect(
      configFromRun([], { ...FLAGS, metricsPort: '9464', metricsHost: '0.0.0.0' }, {}),
    ).toMatchObject({ metricsPort: 9464, metricsHost: '0.0.0.0' });
    expect(
      configFromRun([], FLAGS, { TABLEGATE_METRICS_PORT: '9100', TABLEGATE_METRICS_HOST: '::' }),
    ).toMatchObject({ metricsPort: 9100, metricsHost: '::' });
    expect(configFromRun([], FLAGS, { TABLEGATE_METRICS_PORT: '' }).metricsPort).toBeNull();
  });

  test('a metrics port that is no port, or the API port itself, is a usage error', () => {
    expect(() => configFromRun([], { ...FLAGS, metricsPort: 'x' }, {})).toThrow(
      "--metrics-port must be a whole number from 0 to 65535, got 'x'",
    );
    expect(() => configFromRun([], { ...FLAGS, metricsPort: '8080' }, {})).toThrow(
      "--metrics-port must differ from the API's port 8080: metrics are never served on it",
    );
  });
});
