#!/usr/bin/env node
/**
 * The token check's own cost, old and new side by side in one process (rounds alternate, so
 * both meet the same machine): the first use of a token (signature and claims verified) and
 * every later use (the verified-token cache, plus, now, the own user's revocation state).
 *
 *   npm run build && BENCH_VERIFY_OLD=<old checkout>/dist node bench/verify-micro.mjs
 *
 * BENCH_VERIFY_OLD: a build from before jose (its dist/auth/tokens.js has TokenService, which
 * verifies with jsonwebtoken). Without it only the new path is measured.
 */
import { generateKeyPairSync } from 'node:crypto';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { SignJWT } from 'jose';

const here = path.dirname(new URL(import.meta.url).pathname);
const load = (dist, module) => import(pathToFileURL(path.join(dist, module)).href);
const dist = path.join(here, '..', 'dist');
const { OwnTokens } = await load(dist, 'auth/tokens.js');
const { Authenticator } = await load(dist, 'auth/authenticator.js');
const { UserStates } = await load(dist, 'auth/user-states.js');
const { ProviderTokens } = await load(dist, 'auth/provider-tokens.js');
const oldDist = process.env.BENCH_VERIFY_OLD;
const old = oldDist ? await load(oldDist, 'auth/tokens.js') : null;

const SECRET = 'micro-benchmark-secret-0123456789abcdefgh';
const TOKENS = 2000;
const ROUNDS = 5;
const user = (i) => ({
  id: String(i),
  email: `u${i}@example.com`,
  role: 'user',
  passwordVersion: 'v',
});
const own = new OwnTokens(SECRET, 3600);
const states = new UserStates(
  async (ids) => new Map(ids.map((id) => [id, { role: 'user', passwordVersion: 'v' }])),
);
const newTokens = await Promise.all(Array.from({ length: TOKENS }, (_, i) => own.sign(user(i))));
const oldService = old ? old.TokenService.create(SECRET, '1h') : null;
const oldTokens = oldService
  ? Array.from({ length: TOKENS }, (_, i) => oldService.sign(user(i)))
  : [];

/** µs per call of `fn(i)` over n calls (awaited when it returns a promise). */
async function perCall(n, fn) {
  const start = process.hrtime.bigint();
  for (let i = 0; i < n; i++) {
    const result = fn(i);
    if (result instanceof Promise) await result;
  }
  return Number(process.hrtime.bigint() - start) / n / 1000;
}

const median = (values) => [...values].sort((a, b) => a - b)[values.length >> 1];
const rows = new Map();
const record = (name, value) => rows.set(name, [...(rows.get(name) ?? []), value]);

// Provider tokens: the three algorithms, through jose (first use only; later uses are the cache).
const pairs = {
  RS256: generateKeyPairSync('rsa', { modulusLength: 2048 }),
  ES256: generateKeyPairSync('ec', { namedCurve: 'P-256' }),
  EdDSA: generateKeyPairSync('ed25519'),
};
const providers = {};
for (const [alg, pair] of Object.entries(pairs)) {
  const key = pair.publicKey;
  providers[alg] = {
    verifier: new ProviderTokens(
      { getKey: async () => key, algorithms: [alg] },
      {
        issuer: 'i',
        audience: 'a',
        claims: { userId: 'sub', email: 'email', role: 'role' },
        defaultRole: 'user',
        definesRole: null,
      },
    ),
    tokens: await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        new SignJWT({ iss: 'i', aud: 'a', sub: `u${i}` })
          .setProtectedHeader({ alg })
          .setExpirationTime('1h')
          .sign(pair.privateKey),
      ),
    ),
  };
}

for (let round = 0; round < ROUNDS; round++) {
  // First use of each token: no cache.
  if (oldService) {
    const fresh = old.TokenService.create(SECRET, '1h');
    record(
      'first use, own HS256: before (jsonwebtoken)',
      await perCall(TOKENS, (i) => fresh.verify(oldTokens[i])),
    );
  }
  const authenticator = new Authenticator(own, null, states);
  for (let i = 0; i < TOKENS; i++)
    states.remember(String(i), { role: 'user', passwordVersion: 'v' });
  record(
    'first use, own HS256: now (jose)',
    await perCall(TOKENS, (i) => authenticator.authenticate(newTokens[i])),
  );
  for (const [alg, { verifier, tokens }] of Object.entries(providers)) {
    record(
      `first use, provider ${alg} (jose)`,
      await perCall(tokens.length, (i) => verifier.verify(tokens[i])),
    );
  }
  // Later uses: what every request of (h) pays (one token, verified before).
  const hits = 200_000;
  if (oldService) {
    const cached = old.TokenService.create(SECRET, '1h');
    cached.verify(oldTokens[0]);
    record(
      'later use (the guard per request): before',
      await perCall(hits, () => cached.verify(oldTokens[0])),
    );
  }
  await authenticator.authenticate(newTokens[0]);
  record(
    'later use (the guard per request): now, with revocation',
    await perCall(hits, () => authenticator.known(newTokens[0])),
  );
}
states.stop();

console.log(`| check | µs per token (median of ${ROUNDS} rounds) | rounds |`);
console.log('|---|--:|---|');
for (const [name, values] of rows) {
  console.log(
    `| ${name} | ${median(values).toFixed(2)} | ${values.map((v) => v.toFixed(2)).join(' ')} |`,
  );
}
