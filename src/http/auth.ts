/**
 * The routes of auth mode (in open mode they do not exist and answer the JSON 404 of any unknown
 * route): `POST /auth/register` and `POST /auth/login` (public), `GET /auth/me` and
 * `POST /auth/password` (behind the guard). What one client may cost is auth/limits.ts: attempts
 * counted before a password is checked, argon2 work through a bounded queue.
 */
import type { FastifyInstance } from 'fastify';
import { authLimitsOf } from '../auth/limits.js';
import { parseCredentials, parsePasswordChange, type SignedInUser } from '../auth/users.js';
import {
  accessDenied,
  invalidCredentials,
  notOwnUser,
  registrationClosed,
  wrongPassword,
} from '../errors.js';
import { SUCCESS_MESSAGES } from '../messages.js';
import type { Services } from '../services.js';
import { gated } from './route-gate.js';

export function authRoutes(app: FastifyInstance, { config, auth }: Services): void {
  if (config.mode !== 'auth' || !auth) return;
  const { users, tokens, states } = auth;
  const limits = authLimitsOf(auth);

  /** A token for the user as just read, whose state revocation now knows too. */
  const tokenFor = (user: SignedInUser, checkedAt: number) => {
    states.remember(user.id, user, checkedAt);
    return tokens.sign(user);
  };

  app.post('/auth/register', gated({ kind: 'public' }), async (request) => {
    // Before the body is even looked at: a closed gateway says the same to every caller.
    if (config.registration === 'closed') throw registrationClosed();
    // Any other field (`role` too) is ignored: a user made here gets --default-role.
    const credentials = parseCredentials(request.body);
    await limits.countRegistration(request.ip);
    await limits.hashing(request.ip, () => users.register(credentials));
    return { success: true, message: SUCCESS_MESSAGES.registered };
  });

  app.post('/auth/login', gated({ kind: 'public' }), async (request) => {
    const credentials = parseCredentials(request.body);
    // Counted before verifying, so every request of a parallel burst is counted (docs/auth.md).
    const attempt = await limits.beginLogin(request.ip, credentials.email);
    const startedAt = Date.now();
    let user: SignedInUser | null;
    try {
      user = await limits.hashing(request.ip, () => users.authenticate(credentials));
    } catch (error) {
      // Refused by the queue or MySQL down: no password was checked, nothing to count.
      await attempt.succeeded();
      throw error;
    }
    if (!user) throw invalidCredentials();
    await attempt.succeeded();
    return { success: true, token: await tokenFor(user, startedAt) };
  });

  // Who the token says the caller is; an own user's or a provider's alike.
  app.get('/auth/me', gated({ kind: 'signed-in' }), async (request) => {
    const claims = request.auth;
    if (claims === null) throw accessDenied();
    return { id: claims.sub, email: claims.email === '' ? null : claims.email, role: claims.role };
  });

  // An own user's new password: their other tokens stop working (docs/auth.md); the
  // answer carries a new one so that this client goes on.
  app.post('/auth/password', gated({ kind: 'signed-in' }), async (request) => {
    const claims = request.auth;
    if (claims === null) throw accessDenied();
    if (claims.passwordVersion === null) throw notOwnUser();
    const change = parsePasswordChange(request.body);
    // A stolen token must not make a password-guessing oracle: counted as failed logins are.
    const attempt = await limits.beginLogin(request.ip, claims.email);
    const startedAt = Date.now();
    let user: SignedInUser | null;
    try {
      user = await limits.hashing(request.ip, () =>
        users.changePassword(claims.sub, change.oldPassword, change.newPassword),
      );
    } catch (error) {
      await attempt.succeeded();
      throw error;
    }
    if (!user) throw wrongPassword();
    await attempt.succeeded();
    return {
      success: true,
      message: SUCCESS_MESSAGES.passwordChanged,
      token: await tokenFor(user, startedAt),
    };
  });
}
