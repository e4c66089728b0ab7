/**
 * `POST /auth/register` and `POST /auth/login` (auth mode only; in open mode they do not exist
 * and answer the JSON 404 of any unknown route). Failed logins are counted per client IP and
 * email with @fastify/rate-limit; past MAX_FAILED_LOGINS in the window, login answers 429.
 */
import rateLimit, { normalizeIP } from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { normalizeEmail, parseCredentials } from '../auth/users.js';
import { invalidCredentials, tooManyAttempts } from '../errors.js';
import type { Services } from '../services.js';

/** CONTRACT §4: more than 10 failures in a minute for one IP and email → 429. */
export const MAX_FAILED_LOGINS = 10;
export const FAILED_LOGINS_WINDOW_MS = 60_000;
/**
 * Clients (IP + email) tracked at once. The store is an LRU: a small one would let an attacker
 * evict a victim's counter by failing logins for many other emails.
 */
const TRACKED_CLIENTS = 100_000;

/** IPv6 clients are grouped by /64, as @fastify/rate-limit does by default. */
export function loginAttemptKey(ip: string, email: string): string {
  return `${normalizeIP(ip, 64)}\n${normalizeEmail(email)}`;
}

function keyOf(request: FastifyRequest): string {
  const { email } = request.body as { email: string };
  return loginAttemptKey(request.ip, email);
}

export function authRoutes(app: FastifyInstance, { config, auth }: Services): void {
  if (config.mode !== 'auth' || !auth) return;
  const { users, tokens } = auth;
  app.register(async (scope) => {
    // Not global: no hook on any route; the login handler counts failures itself.
    await scope.register(rateLimit, { global: false });
    const failedLogins = scope.createRateLimit({
      max: MAX_FAILED_LOGINS,
      timeWindow: FAILED_LOGINS_WINDOW_MS,
      keyGenerator: keyOf,
      // Read by the local store (see index.js mergeParams), missing from the option type.
      ...({ cache: TRACKED_CLIENTS } as object),
    });

    scope.post('/auth/register', async (request) => {
      await users.register(parseCredentials(request.body));
      return { success: true, message: 'User register succesful' };
    });

    scope.post('/auth/login', async (request) => {
      const credentials = parseCredentials(request.body);
      // Peek first, so that a blocked client costs no argon2 verification.
      const seen = await failedLogins(request, { increment: false });
      if (!seen.isAllowed && seen.remaining === 0) {
        throw tooManyAttempts(Math.max(1, seen.ttlInSeconds));
      }
      const user = await users.authenticate(credentials);
      if (!user) {
        await failedLogins(request);
        throw invalidCredentials();
      }
      return { success: true, token: tokens.sign(user) };
    });
  });
}
