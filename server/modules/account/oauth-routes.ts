/**
 * The public OAuth callback, outside /v1 and /v2: the identity provider sends the person here after the
 * consent. No API key and no quota (the flow's single-use state is the credential); it answers a short
 * page, or redirects to the flow's allowed return URL.
 */
import { Router, type Response } from 'express';
import { escapeHtml } from '../../text/html';
import { CALLBACK_PATH, type OAuthConnectService } from './oauth';

const page = (title: string, message: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><meta name="robots" content="noindex"><title>${escapeHtml(title)}</title>` +
  `<style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem;color:#222}</style></head>` +
  `<body><h1>${escapeHtml(title)}</h1><p>${escapeHtml(message)}</p></body></html>`;

const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

export function oauthCallbackRouter(oauth: OAuthConnectService): Router {
  const router = Router();
  const html = (res: Response, status: number, title: string, message: string) =>
    res.status(status).type('html').set('Cache-Control', 'no-store').send(page(title, message));

  router.get(CALLBACK_PATH, async (req, res) => {
    const outcome = await oauth.callback({
      state: text(req.query.state),
      code: text(req.query.code),
      error: text(req.query.error),
      error_description: text(req.query.error_description),
    });
    if (outcome.kind === 'refused') return html(res, 400, outcome.title, outcome.message);
    if (outcome.redirect) return res.set('Cache-Control', 'no-store').redirect(303, outcome.redirect);
    html(res, outcome.connected ? 200 : 400, outcome.title, outcome.message);
  });
  return router;
}
