import type { Request, Response } from 'express';

import { AppError } from '@shared/errors';
import { csrfTokenOf, SESSION_COOKIE } from '@shared/identity/sessions';

import { principalOf, sessionCookie } from '../../http/auth';
import { route, type RouteDef } from '../../http/routes';
import { ok, success } from '../../http/shapes';
import type { FeatureContext } from '../feature';
import { ConsoleSession } from './schemas';

/**
 * Secure whenever the request came over TLS, directly or through a proxy that says so: a cookie sent back over plain
 * HTTP would carry the session in the clear. Local `npm start` is plain HTTP on loopback, where browsers refuse Secure.
 */
const overTls = (req: Request) => req.secure || req.get('x-forwarded-proto')?.split(',')[0]?.trim() === 'https';

function setCookie(req: Request, res: Response, secret: string, expiresAt: Date) {
  res.cookie(SESSION_COOKIE, secret, {
    httpOnly: true,
    sameSite: 'strict',
    secure: overTls(req),
    path: '/',
    expires: expiresAt,
  });
}

const clearCookie = (req: Request, res: Response) =>
  res.clearCookie(SESSION_COOKIE, { httpOnly: true, sameSite: 'strict', secure: overTls(req), path: '/' });

/** The calling session's secret, or 400 when the request was not made with the console's cookie. */
function ownSecret(req: Request): string {
  const { token } = principalOf(req);
  const secret = sessionCookie(req);
  if (!token.sessionOf || !secret || req.get('authorization'))
    throw new AppError(
      'INVALID_REQUEST',
      'This request was not made with a console session cookie; POST /platform/session with your access token opens one.',
    );
  return secret;
}

/** The web console's sign-in (shared/identity/sessions.ts): an access token exchanged for an httpOnly cookie. */
export function consoleSessionRoutes(deps: Pick<FeatureContext, 'identity' | 'config'>): RouteDef[] {
  const tags = ['Console session'];
  return [
    route({
      method: 'post',
      path: '/session',
      summary: 'Open a web console session: exchange the bearer token for a session cookie',
      description:
        'Sets `slipway_session` (httpOnly, SameSite=Strict, Secure over TLS) and answers the CSRF token every change ' +
        'made with that cookie must send as `X-CSRF-Token`. The session has the token’s user and scopes, lives ' +
        'CONSOLE_SESSION_TTL_S (12 h by default) or until the token expires, and ends when the token is revoked. ' +
        'Needs no permission; a session cannot open another.',
      tags,
      request: {},
      before: [],
      responses: {
        200: { description: 'The session; its secret is only in the cookie', schema: success(ConsoleSession) },
        400: { description: 'INVALID_REQUEST: the token is itself a console session' },
      },
      handler: async (_input, req, res) => {
        const session = await deps.identity.createSession(principalOf(req), deps.config.CONSOLE_SESSION_TTL_S);
        setCookie(req, res, session.secret, session.expiresAt);
        res.set('cache-control', 'no-store');
        res.json(
          ok({ id: session.id, csrfToken: csrfTokenOf(session.secret), expiresAt: session.expiresAt.toISOString() }),
        );
      },
    }),
    route({
      method: 'get',
      path: '/session',
      summary: 'The calling console session and its CSRF token (after a page reload)',
      description: 'Made with the session cookie; 400 for a bearer token, 401 once the session ended.',
      tags,
      request: {},
      before: [],
      responses: {
        200: { description: 'The session', schema: success(ConsoleSession) },
        400: { description: 'INVALID_REQUEST: made with a bearer token, not the session cookie' },
      },
      handler: (_input, req, res) => {
        const secret = ownSecret(req);
        const { token } = principalOf(req);
        res.set('cache-control', 'no-store');
        res.json(ok({ id: token._id, csrfToken: csrfTokenOf(secret), expiresAt: token.expiresAt.toISOString() }));
      },
    }),
    route({
      method: 'delete',
      path: '/session',
      summary: 'Sign out: revoke the console session and clear its cookie',
      description: 'The session’s token is revoked at once in every api process; the token it came from lives on.',
      tags,
      request: {},
      before: [],
      responses: {
        204: { description: 'Signed out' },
        400: { description: 'INVALID_REQUEST: made with a bearer token, not the session cookie' },
      },
      handler: async (_input, req, res) => {
        ownSecret(req);
        const { token, org } = principalOf(req);
        await deps.identity.revokeToken(token._id, org._id);
        clearCookie(req, res);
        res.status(204).end();
      },
    }),
  ];
}
