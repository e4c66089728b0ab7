/**
 * The descriptions of `POST /auth/register` and `POST /auth/login` (auth.ts, auth mode only):
 * the stages each runs, whose errors are its error responses, and the operations, which need no
 * token.
 */
import type { Stage } from '../errors.js';
import { EMAIL_MAX_LENGTH, PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../limits.js';
import { SUCCESS_MESSAGES } from '../messages.js';
import {
  type DescriptionContext,
  type JsonSchema,
  json,
  type RouteOperation,
} from '../openapi/operation.js';

/** Registering inserts the user: a write (WRITE_OUTCOME_UNKNOWN). */
export const REGISTER_STAGES: readonly Stage[] = [
  'json-body',
  'register',
  'request',
  'execute',
  'write',
];
export const LOGIN_STAGES: readonly Stage[] = ['json-body', 'login', 'request', 'execute'];

const CREDENTIALS: JsonSchema = {
  type: 'object',
  required: ['email', 'password'],
  properties: {
    email: { type: 'string', maxLength: EMAIL_MAX_LENGTH, examples: ['demo@tablegate.dev'] },
    password: { type: 'string', minLength: PASSWORD_MIN_LENGTH, maxLength: PASSWORD_MAX_LENGTH },
  },
};

const REGISTER_RESULT: JsonSchema = {
  type: 'object',
  required: ['success', 'message'],
  properties: { success: { const: true }, message: { const: SUCCESS_MESSAGES.registered } },
};

const LOGIN_RESULT: JsonSchema = {
  type: 'object',
  required: ['success', 'token'],
  properties: {
    success: { const: true },
    token: {
      type: 'string',
      description: 'A JWT (HS256): send it as `Authorization: Bearer <token>`',
    },
  },
};

const credentials = (context: DescriptionContext): JsonSchema => ({
  required: true,
  content: json(context.shared('Credentials')),
});

export const registerOperation: RouteOperation = {
  path: '/auth/register',
  method: 'post',
  schemas: { Credentials: CREDENTIALS, RegisterResult: REGISTER_RESULT },
  authOnly: true,
  public: true,
  describe: (context) => ({
    tags: ['auth'],
    operationId: 'register',
    summary: 'Register a user',
    security: [],
    requestBody: credentials(context),
    responses: {
      200: {
        description: 'Registered',
        content: json(context.shared('RegisterResult')),
      },
      ...context.errors('register', REGISTER_STAGES),
    },
  }),
};

export const loginOperation: RouteOperation = {
  path: '/auth/login',
  method: 'post',
  schemas: { Credentials: CREDENTIALS, LoginResult: LOGIN_RESULT },
  authOnly: true,
  public: true,
  describe: (context) => ({
    tags: ['auth'],
    operationId: 'login',
    summary: 'Log in: get a token',
    description:
      'The token goes in `Authorization: Bearer <token>`. In this page a successful login authorizes the page too.',
    security: [],
    requestBody: credentials(context),
    responses: {
      200: { description: 'Logged in', content: json(context.shared('LoginResult')) },
      ...context.errors('login', LOGIN_STAGES),
    },
  }),
};
