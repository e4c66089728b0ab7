/**
 * `POST /auth/register` and `POST /auth/login` (auth mode only; in open mode they do not exist
 * and answer the JSON 404 of any unknown route). What one client may cost is auth/limits.ts:
 * attempts counted before the password is checked, argon2 work through a bounded queue.
 */
import type { FastifyInstance } from 'fastify';
import { AuthLimits } from '../auth/limits.js';
import { parseCredentials } from '../auth/users.js';
import { invalidCredentials, registrationClosed } from '../errors.js';
import { SUCCESS_MESSAGES } from '../messages.js';
import type { Services } from '../services.js';
import { MemoryCounterStore } from '../throttle/counter-store.js';

export function authRoutes(app: FastifyInstance, { config, auth }: Services): void {
  if (config.mode !== 'auth' || !auth) return;
  const { users, tokens } = auth;
  const limits = new AuthLimits(auth.counters ?? new MemoryCounterStore());

  app.post('/auth/register', async (request) => {
    // Before the body is even looked at: a closed gateway says the same to every caller.
    if (config.registration === 'closed') throw registrationClosed();
    // Any other field (`role` too) is ignored: a user made here gets --default-role.
    const credentials = parseCredentials(request.body);
    await limits.countRegistration(request.ip);
    await limits.hashing(request.ip, () => users.register(credentials));
    return { success: true, message: SUCCESS_MESSAGES.registered };
  });

  app.post('/auth/login', async (request) => {
    const credentials = parseCredentials(request.body);
    // Counted before verifying: every request of a parallel burst is counted (issue 13).
    const attempt = await limits.beginLogin(request.ip, credentials.email);
    let user: Awaited<ReturnType<typeof users.authenticate>>;
    try {
      user = await limits.hashing(request.ip, () => users.authenticate(credentials));
    } catch (error) {
      // Refused by the queue or MySQL down: no password was checked, nothing to count.
      await attempt.succeeded();
      throw error;
    }
    if (!user) throw invalidCredentials();
    await attempt.succeeded();
    return { success: true, token: tokens.sign(user) };
  });
}
