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

export const ME_STAGES: readonly Stage[] = ['request'];
/** A password change checks the old one like a login and writes the new hash. */
export const PASSWORD_STAGES: readonly Stage[] = [
  'json-body',
  'password',
  'login',
  'request',
  'execute',
];

const ME: JsonSchema = {
  type: 'object',
  required: ['id', 'email', 'role'],
  properties: {
    id: { type: 'string', description: 'What `@user.id` is in a policy' },
    email: { type: ['string', 'null'], description: 'null when the token carries none' },
    role: { type: 'string' },
  },
};

const PASSWORD_CHANGE: JsonSchema = {
  type: 'object',
  required: ['old_password', 'new_password'],
  properties: {
    old_password: { type: 'string' },
    new_password: {
      type: 'string',
      minLength: PASSWORD_MIN_LENGTH,
      maxLength: PASSWORD_MAX_LENGTH,
    },
  },
};

const PASSWORD_CHANGED: JsonSchema = {
  type: 'object',
  required: ['success', 'message', 'token'],
  properties: {
    success: { const: true },
    message: { const: SUCCESS_MESSAGES.passwordChanged },
    token: { type: 'string', description: 'A new token: the ones before stop working' },
  },
};

export const meOperation: RouteOperation = {
  path: '/auth/me',
  method: 'get',
  schemas: { Me: ME },
  authOnly: true,
  signedIn: true,
  describe: (context) => ({
    tags: ['auth'],
    operationId: 'me',
    summary: 'Who the token says the caller is',
    responses: {
      200: { description: 'The caller', content: json(context.shared('Me')) },
      ...context.errors('me', ME_STAGES),
    },
  }),
};

export const passwordOperation: RouteOperation = {
  path: '/auth/password',
  method: 'post',
  schemas: { PasswordChange: PASSWORD_CHANGE, PasswordChanged: PASSWORD_CHANGED },
  authOnly: true,
  signedIn: true,
  describe: (context) => ({
    tags: ['auth'],
    operationId: 'changePassword',
    summary: "Change the caller's password",
    description:
      "For the gateway's own users. Every token signed before stops working within 10 s; the answer carries a new one.",
    requestBody: { required: true, content: json(context.shared('PasswordChange')) },
    responses: {
      200: { description: 'Changed', content: json(context.shared('PasswordChanged')) },
      ...context.errors('changePassword', PASSWORD_STAGES),
    },
  }),
};
