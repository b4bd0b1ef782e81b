/**
 * The web console at /app: the files `npm run build` writes to dist/app (app/, bundled by Vite), served from the
 * API's own origin under a Content-Security-Policy that allows no inline script or style and no other origin, so
 * the page can call the API with the key it holds and nothing else. Any path without a file of its own is the
 * console's page (index.html), which routes by its URL hash; the hashed assets are cached for good.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import express, { Router } from 'express';

export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

export function consoleApp(dir: string): Router {
  const router = Router();
  router.use((_req, res, next) => {
    res.set({
      'Content-Security-Policy': CONSOLE_CSP,
      'X-Content-Type-Options': 'nosniff',
      'Referrer-Policy': 'no-referrer',
      'Cache-Control': 'no-cache',
    });
    next();
  });
  router.use('/assets', express.static(join(dir, 'assets'), { immutable: true, maxAge: '365d' }));
  router.use(express.static(dir, { index: 'index.html' }));
  router.get('/{*rest}', (_req, res, next) => {
    const page = join(dir, 'index.html');
    if (!existsSync(page)) {
      next();
      return;
    }
    res.sendFile(page);
  });
  return router;
}
