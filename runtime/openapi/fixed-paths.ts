// The paths every caller sees whatever the policies: the health check, the OpenAPI document
// itself and, when auth is on, the `/auth/*` endpoints of docs/authentication.md (whose login
// and register bodies name a password, as the only bodies that do).

import type { JsonSchema } from './column-schemas.js';

export type PathItem = Readonly<Record<string, unknown>>;

const json = (schema: JsonSchema): JsonSchema => ({ 'application/json': { schema } });

const object = (properties: Record<string, JsonSchema>, required: readonly string[]): JsonSchema => ({
  type: 'object',
  properties,
  required,
});

const closedObject = (properties: Record<string, JsonSchema>, required: readonly string[]): JsonSchema => ({
  ...object(properties, required),
  additionalProperties: false,
});

const ERROR = { default: { $ref: '#/components/responses/Error' } };

const ok = (description: string, schema: JsonSchema, status = '200'): JsonSchema => ({
  [status]: { description, content: json(schema) },
  ...ERROR,
});

const body = (schema: JsonSchema, required = true): JsonSchema => ({ required, content: json(schema) });

const post = (
  operationId: string,
  summary: string,
  responses: JsonSchema,
  extra: Record<string, unknown> = {},
): PathItem => ({ post: { operationId, summary, tags: ['auth'], responses, ...extra } });

const USERNAME: JsonSchema = { type: 'string', minLength: 1, maxLength: 32 };
/** 8–72 UTF-8 bytes; `maxLength` counts characters, so it says 72 as the bound no password passes. */
const PASSWORD: JsonSchema = {
  type: 'string',
  format: 'password',
  writeOnly: true,
  minLength: 8,
  maxLength: 72,
};
const CREDENTIALS = closedObject({ username: USERNAME, password: PASSWORD }, ['username', 'password']);
const TOKEN_PAIR = object(
  {
    token: { type: 'string', description: 'The access token: `Authorization: Bearer <token>`.' },
    token_type: { const: 'Bearer' },
    expires_in: { type: 'integer', description: 'Seconds until the access token expires.' },
    refresh_token: {
      type: 'string',
      description: 'Opaque; `POST /auth/refresh` exchanges it for a new pair.',
    },
  },
  ['token', 'token_type', 'expires_in', 'refresh_token'],
);
const REFRESH = closedObject({ refresh_token: { type: 'string' } }, ['refresh_token']);
const EMPTY = { type: 'object' };
/** Only a logged-in caller: an anonymous one (or one with an anonymous API key) is 401. */
const LOGGED_IN = { security: [{ bearer: [] }] };

export const AUTH_PATHS: Readonly<Record<string, PathItem>> = {
  '/auth/setup': post(
    'auth.setup',
    'Create the auth tables, the default policies and the admin account (once; then 409)',
    ok(
      'The admin account; the password is shown only this once',
      object({ username: USERNAME, password: { type: 'string' } }, ['username', 'password']),
      '201',
    ),
  ),
  '/auth/register': post(
    'auth.register',
    'Register a user',
    ok('The new user', object({ id: { type: 'integer' }, username: USERNAME }, ['id', 'username']), '201'),
    { requestBody: body(CREDENTIALS) },
  ),
  '/auth/login': post(
    'auth.login',
    'Log in: open a session',
    ok('The tokens of the new session', TOKEN_PAIR),
    {
      requestBody: body(CREDENTIALS),
    },
  ),
  '/auth/logout': post(
    'auth.logout',
    'Log out; with a refresh token, end its session',
    ok('Logged out', EMPTY),
    {
      requestBody: body(object({ refresh_token: { type: 'string' } }, []), false),
    },
  ),
  '/auth/refresh': post(
    'auth.refresh',
    'Rotate a refresh token: a new token pair',
    ok('The new pair', TOKEN_PAIR),
    {
      requestBody: body(REFRESH),
    },
  ),
  '/auth/password': post('auth.password', "Change the caller's own password", ok('Changed', EMPTY), {
    requestBody: body(
      closedObject({ current_password: PASSWORD, new_password: PASSWORD }, [
        'current_password',
        'new_password',
      ]),
    ),
    ...LOGGED_IN,
  }),
  '/auth/sessions/revoke': post(
    'auth.sessions.revoke',
    'Log out everywhere: end every session of the caller',
    ok('How many sessions ended', object({ revoked: { type: 'integer' } }, ['revoked'])),
    LOGGED_IN,
  ),
};

const DOCUMENT = { type: 'object', description: 'An OpenAPI 3.1 document' };
const openApi = (operationId: string): PathItem => ({
  get: {
    operationId,
    summary: 'This document: the API as the caller may use it',
    tags: ['meta'],
    responses: {
      '200': {
        description: 'The OpenAPI document',
        content: {
          'application/openapi+json': { schema: DOCUMENT },
          'application/json': { schema: DOCUMENT },
        },
      },
      ...ERROR,
    },
  },
});

export const META_PATHS: Readonly<Record<string, PathItem>> = {
  '/': {
    get: {
      operationId: 'health',
      summary: 'Health check (no token needed)',
      tags: ['meta'],
      security: [{}],
      responses: ok(
        'The server and its database answer',
        object(
          {
            status: { const: 'ok' },
            database: { enum: ['postgres', 'mysql', 'sqlite'] },
            auth: { type: 'boolean' },
            warning: { type: 'string' },
          },
          ['status', 'database', 'auth'],
        ),
      ),
    },
  },
  '/openapi.json': openApi('openapi'),
  '/rest/v1/': openApi('pgrst.openapi'),
};
