import fs from 'node:fs';
import path from 'node:path';

import compression from 'compression';
import express, { type RequestHandler, Router } from 'express';

/** Paths of the api's own origins and pages: an unknown one there is the origin's JSON 404, never the console. */
const API_PATHS = /^\/(?:compat|platform|api|mcp|hooks|docs|openapi\.json|healthz|readyz)(?:\/|$)/;

/**
 * The page may load only what the api serves; frames only the builder's previews and the deployments' URLs (any
 * http(s) origin: they live under EDGE_DOMAIN on a port of the operator's choosing); nothing may frame the console.
 */
const CSP = [
  "default-src 'self'",
  "img-src 'self' data: blob:",
  "style-src 'self' 'unsafe-inline'",
  "connect-src 'self'",
  'frame-src http: https:',
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "object-src 'none'",
].join('; ');

const securityHeaders: RequestHandler = (_req, res, next) => {
  res.set({
    'content-security-policy': CSP,
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'same-origin',
    'x-frame-options': 'DENY',
  });
  next();
};

/**
 * The web console (web/, built by Vite): its hashed assets cached for good, and index.html for every other page path
 * so a reload of /deployments/… lands on the app, never cached so a new build is picked up at once. Absent when the
 * console was not built (`npm start` and `npm test` build it; `npm run build:web` by hand).
 */
export function consoleRouter(dir: string): Router | undefined {
  const index = path.join(dir, 'index.html');
  if (!dir || !fs.existsSync(index)) return undefined;
  const router = Router();
  // The console's files only (the API's answers are small, and its event streams must not be buffered): brotli or
  // gzip as the browser accepts, about a third of the bytes.
  router.use(compression());
  router.use(
    '/assets',
    securityHeaders,
    express.static(path.join(dir, 'assets'), { immutable: true, maxAge: '1y', index: false }),
  );
  router.use(securityHeaders, express.static(dir, { index: false, maxAge: 0 }));
  router.get(/.*/, (req, res, next) => {
    // Only a navigation (a browser asking for a page): a missing script or an API client's typo stays a 404.
    const navigation = (req.get('accept') ?? '').includes('text/html');
    if (API_PATHS.test(req.path) || req.path.startsWith('/assets/') || !navigation) return next();
    res.set('cache-control', 'no-cache');
    securityHeaders(req, res, () => res.sendFile(index));
  });
  return router;
}
