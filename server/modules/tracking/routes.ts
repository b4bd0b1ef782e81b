/**
 * The public endpoints in emails, outside /v1 and /v2: no API key, no quota, no JSON. Every answer is
 * the same for a bad token as far as a recipient can tell, and a click goes only to the signed target.
 *   GET  /u/:token       unsubscribe confirmation page (a button that POSTs)
 *   POST /u/:token       unsubscribe (RFC 8058 one-click from the mail client, or the page's button)
 *   GET  /o/:token.gif   open pixel
 *   GET  /c/:token       click redirect
 */
import express, { Router } from 'express';
import { escapeHtml } from '../../text/html';
import type { TrackingService } from './service';

const PIXEL = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');

const page = (title: string, body: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><meta name="robots" content="noindex"><title>${title}</title>` +
  `<style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem;color:#222}button{font-size:1rem;padding:.5rem 1rem}</style></head><body>${body}</body></html>`;

export function trackingRouter(tracking: TrackingService): Router {
  const router = Router();
  const html = (res: express.Response, status: number, content: string) =>
    res.status(status).type('html').set('Cache-Control', 'no-store').send(content);

  router.get('/u/:token', (req, res) => {
    if (!tracking.isValid(req.params.token))
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
    const oneClick = (req.body as Record<string, string> | undefined)?.['List-Unsubscribe'] === 'One-Click';
    if (!(await tracking.unsubscribe(req.params.token, oneClick ? 'oneClick' : 'link')))
      return html(res, 404, page('Link not valid', '<p>This unsubscribe link is not valid.</p>'));
    html(
      res,
      200,
      page('Unsubscribed', '<h1>You are unsubscribed</h1><p>You will not receive further emails from this sender.</p>'),
    );
  });

  router.get('/o/:token.gif', async (req, res) => {
    await tracking.open(req.params.token, req.get('user-agent'));
    res.status(200).type('gif').set('Cache-Control', 'no-store, private').send(PIXEL);
  });

  router.get('/c/:token', async (req, res) => {
    const target = await tracking.click(req.params.token, req.get('user-agent'));
    if (!target) return html(res, 404, page('Link not valid', '<p>This link is not valid.</p>'));
    res.redirect(302, target);
  });

  return router;
}
