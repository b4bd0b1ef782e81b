/**
 * The documentation portal (dist/docs, `npm run docs`) at /docs. Its page names the spec's first server, the local
 * deployment (`http://localhost:3000`), in its servers box and in every operation's URL; served from another
 * origin, the page names that origin instead, so what a reader copies reaches the server they are reading. The
 * page is rewritten as it is served (it is static and has no script of ours): the origin is the request's, as
 * Express reads it (`Host`, and `X-Forwarded-Proto`/`-Host` behind a trusted proxy), and only an origin of plain
 * host characters is written into the page. An origin that is one of the spec's servers gets the page as built.
 */
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import express, { Router, type NextFunction, type Request, type Response } from 'express';

/** A scheme, a host name or IP address (IPv6 in brackets) and a port: nothing that could end a JSON string or a tag. */
const ORIGIN = /^https?:\/\/(?:[a-z0-9.-]+|\[[0-9a-f:.]+\])(?::[0-9]{1,5})?$/i;

export function docsPortal(dir: string, servers: readonly string[]): Router {
  const router = Router();
  const [local] = servers;
  const file = join(dir, 'index.html');
  // The page split at the local server's URL, kept until the file changes (a rebuild while the server runs).
  let cached: { mtimeMs: number; parts: string[] } | undefined;
  const parts = async (): Promise<string[]> => {
    const { mtimeMs } = await stat(file);
    if (cached?.mtimeMs !== mtimeMs) cached = { mtimeMs, parts: (await readFile(file, 'utf8')).split(local) };
    return cached.parts;
  };
  if (local)
    router.get(['/', '/index.html'], (req: Request, res: Response, next: NextFunction) => {
      // `/docs` without its slash goes on to the static files, which redirect it to `/docs/`.
      if (req.path === '/' && !req.originalUrl.split('?')[0].endsWith('/')) return next();
      const origin = `${req.protocol}://${req.host}`;
      if (!ORIGIN.test(origin) || servers.includes(origin)) return next();
      parts().then(
        (page) => res.type('html').send(page.join(origin)),
        (err: NodeJS.ErrnoException) => (err.code === 'ENOENT' ? next() : next(err)),
      );
    });
  router.use(express.static(dir));
  return router;
}
