/**
 * `POST /auth/register` and `POST /auth/login` (auth mode only; in open mode they do not exist
 * and answer the JSON 404 of any unknown route). Failed logins are counted per client IP and
 * email with @fastify/rate-limit; past MAX_FAILED_LOGINS in the window, login answers 429.
 */
import rateLimit, { normalizeIP } from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { normalizeEmail, parseCredentials } from '../auth/users.js';
import { invalidCredentials, tooManyAttempts, tooManyRequests } from '../errors.js';
import type { Services } from '../services.js';

/** CONTRACT §4: more than 10 failures in a minute for one IP and email → 429. */
export const MAX_FAILED_LOGINS = 10;
export const FAILED_LOGINS_WINDOW_MS = 60_000;
/**
 * Every registration and every failed login costs ~20 ms of argon2 on the libuv pool; without a
 * bound per address, one client could keep the CPU busy with new emails. Per minute and IP.
 */
export const MAX_REGISTRATIONS_PER_IP = 60;
export const MAX_FAILED_LOGINS_PER_IP = 100;
/**
 * Clients (IP + email) tracked at once. The store is an LRU: a small one would let an attacker
 * evict a victim's counter by failing logins for many other emails.
 */
const TRACKED_CLIENTS = 100_000;

/** IPv6 clients are grouped by /64, as @fastify/rate-limit does by default. */
export function loginAttemptKey(ip: string, email: string): string {
  return `${normalizeIP(ip, 64)}\n${normalizeEmail(email)}`;
}

function addressOf(request: FastifyRequest): string {
  return normalizeIP(request.ip, 64);
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

    const perAddress = (max: number) =>
      scope.createRateLimit({
        max,
        timeWindow: FAILED_LOGINS_WINDOW_MS,
        keyGenerator: addressOf,
        ...({ cache: TRACKED_CLIENTS } as object),
      });
    const registrations = perAddress(MAX_REGISTRATIONS_PER_IP);
    const failuresFromAddress = perAddress(MAX_FAILED_LOGINS_PER_IP);

    scope.post('/auth/register', async (request) => {
      const credentials = parseCredentials(request.body);
      const counted = await registrations(request);
      // (isAllowed is true only for allow-listed keys; the count decides.)
      if (!counted.isAllowed && counted.isExceeded) {
        throw tooManyRequests(Math.max(1, counted.ttlInSeconds));
      }
      await users.register(credentials);
      return { success: true, message: 'User register succesful' };
    });

    scope.post('/auth/login', async (request) => {
      const credentials = parseCredentials(request.body);
      // Peek first, so that a blocked client costs no argon2 verification.
      const seen = await failedLogins(request, { increment: false });
      if (!seen.isAllowed && seen.remaining === 0) {
        throw tooManyAttempts(Math.max(1, seen.ttlInSeconds));
      }
      const fromAddress = await failuresFromAddress(request, { increment: false });
      if (!fromAddress.isAllowed && fromAddress.remaining === 0) {
        throw tooManyRequests(Math.max(1, fromAddress.ttlInSeconds));
      }
      const user = await users.authenticate(credentials);
      if (!user) {
        await Promise.all([failedLogins(request), failuresFromAddress(request)]);
        throw invalidCredentials();
      }
      return { success: true, token: tokens.sign(user) };
    });
  });
}
