/**
 * The public endpoints in emails, outside /v1 and /v2: no API key, no quota, no JSON. Every answer is
 * the same for a bad token as far as a recipient can tell, and a click goes only to the signed target.
 *   GET  /u/:token       unsubscribe confirmation page (a button that POSTs)
 *   POST /u/:token       unsubscribe (RFC 8058 one-click from the mail client, or the page's button)
 *   GET  /o/:token.gif   open pixel
 *   GET  /c/:token       click redirect
 *   GET  /tls/ask?domain=  for a reverse proxy's on-demand certificates (Caddy's `ask`): 200 only for the
 *                          exact name of a verified tracking domain
 * The link paths answer on the default host and on verified tracking domains (for their own workspace's
 * tokens) only; any other `Host` is a 404.
 */
import express, { Router } from 'express';
import { escapeHtml } from '../../text/html';
import type { TrackingDomainService } from '../tracking-domain';
import type { HostScope, TrackingService } from './service';

const PIXEL = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');

const page = (title: string, body: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><meta name="robots" content="noindex"><title>${title}</title>` +
  `<style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem;color:#222}button{font-size:1rem;padding:.5rem 1rem}</style></head><body>${body}</body></html>`;

const NOT_VALID = page('Link not valid', '<p>This link is not valid.</p>');

export function trackingRouter(tracking: TrackingService, domains: TrackingDomainService): Router {
  const router = Router();
  const html = (res: express.Response, status: number, content: string) =>
    res.status(status).type('html').set('Cache-Control', 'no-store').send(content);
  /** The request's host scope, or a 404 answered and null. */
  const scope = async (req: express.Request, res: express.Response): Promise<HostScope | null> => {
    const found = await tracking.scopeOf(req.get('host'));
    if (!found) html(res, 404, NOT_VALID);
    return found;
  };

  router.get('/tls/ask', async (req, res) => {
    const domain = typeof req.query.domain === 'string' ? req.query.domain : '';
    const owner = await domains.workspaceOfHost(domain);
    res
      .status(owner ? 200 : 404)
      .type('text')
      .send(owner ? 'ok' : 'unknown domain');
  });

  router.get('/u/:token', async (req, res) => {
    const within = await scope(req, res);
    if (!within) return;
    if (!tracking.isValid(req.params.token, within))
      return html(res, 404, page('Link not valid', '<p>This unsubscribe link is not valid.</p>'));
    html(
      res,
      200,
      page(
        'Unsubscribe',
        `<h1>Unsubscribe</h1><p>Stop receiving these emails?</p><form method="post" action="${escapeHtml(req.params.token)}"><button type="submit">Unsubscribe</button></form>`,
      ),
    );
  });

  router.post('/u/:token', express.urlencoded({ extended: false, limit: '1kb' }), async (req, res) => {
    const within = await scope(req, res);
    if (!within) return;
    const oneClick = (req.body as Record<string, string> | undefined)?.['List-Unsubscribe'] === 'One-Click';
    if (!(await tracking.unsubscribe(req.params.token, oneClick ? 'oneClick' : 'link', within)))
      return html(res, 404, page('Link not valid', '<p>This unsubscribe link is not valid.</p>'));
    html(
      res,
      200,
      page('Unsubscribed', '<h1>You are unsubscribed</h1><p>You will not receive further emails from this sender.</p>'),
    );
  });

  router.get('/o/:token.gif', async (req, res) => {
    const within = await scope(req, res);
    if (!within) return;
    const counted = await tracking.open(req.params.token, req.get('user-agent'), within);
    // A tracking domain serves its own workspace's tokens only, the pixel as the other paths; the default host
    // answers the image whatever the token.
    if (!counted && within.workspaceId !== null) return html(res, 404, NOT_VALID);
    res.status(200).type('gif').set('Cache-Control', 'no-store, private').send(PIXEL);
  });

  router.get('/c/:token', async (req, res) => {
    const within = await scope(req, res);
    if (!within) return;
    const target = await tracking.click(req.params.token, req.get('user-agent'), within);
    if (!target) return html(res, 404, NOT_VALID);
    res.redirect(302, target);
  });

  return router;
}
