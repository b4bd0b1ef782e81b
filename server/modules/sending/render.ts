/**
 * Rendering a saved variant for one contact. Templates were checked when saved (campaign/templates.ts),
 * so this scan only substitutes: `{{name}}` or `{{name | fallback}}`, one pass, linear in the text.
 * A variable with no value and no fallback fails the render, so no email goes out with a hole in it.
 */
import { convert } from 'html-to-text';
import sanitizeHtml from 'sanitize-html';
import { escapeHtml } from '../../text/html';

export type TemplateValues = Record<string, string | undefined>;

export type Rendered = { ok: true; text: string } | { ok: false; missing: string };

export function renderTemplate(
  template: string,
  values: TemplateValues,
  escape: (s: string) => string = (s) => s,
): Rendered {
  let out = '';
  let i = 0;
  for (;;) {
    const open = template.indexOf('{{', i);
    const close = open === -1 ? -1 : template.indexOf('}}', open + 2);
    if (open === -1 || close === -1) return { ok: true, text: out + template.slice(i) };
    const [rawName, rawFallback] = template.slice(open + 2, close).split('|');
    const name = rawName.trim();
    const value = values[name];
    const chosen = value !== undefined && value !== '' ? value : rawFallback?.trim();
    if (chosen === undefined || chosen === '') return { ok: false, missing: name };
    out += template.slice(i, open) + escape(chosen);
    i = close + 2;
  }
}

/** A body with any HTML tag is HTML; otherwise it is plain text with line breaks. */
const looksLikeHtml = (body: string): boolean => /<[a-z][\s\S]*?>/i.test(body);

export interface RenderedBody {
  text: string;
  html: string;
}

/**
 * Only http(s) and mailto URLs stay links: any other href (`javascript:`, `data:`, however it is spelled or
 * encoded, from the template or a contact's value) is dropped, so its text shows as text. Everything else
 * in the author's HTML is kept.
 */
const LINKS_ONLY: sanitizeHtml.IOptions = {
  allowedTags: false,
  allowedAttributes: false,
  allowVulnerableTags: true,
  allowedSchemes: ['http', 'https', 'mailto'],
  allowedSchemesAppliedToAttributes: ['href'],
};

/** The text and HTML parts of a body template (values escaped in the HTML part). */
export function renderBody(
  template: string,
  values: TemplateValues,
): { ok: true; body: RenderedBody } | { ok: false; missing: string } {
  if (looksLikeHtml(template)) {
    const rendered = renderTemplate(template, values, escapeHtml);
    if (!rendered.ok) return rendered;
    const html = sanitizeHtml(rendered.text, LINKS_ONLY);
    return { ok: true, body: { html, text: convert(html, { wordwrap: 78 }) } };
  }
  const text = renderTemplate(template, values);
  if (!text.ok) return text;
  return {
    ok: true,
    body: { text: text.text, html: `<div>${escapeHtml(text.text).replace(/\r?\n/g, '<br>\n')}</div>` },
  };
}

/** A stable choice among weighted variants for one contact: the same contact always gets the same variant. */
export function pickVariant<V extends { weight: number; label: string }>(variants: V[], key: string): V {
  const sorted = [...variants].sort((a, b) => a.label.localeCompare(b.label));
  const total = sorted.reduce((n, v) => n + v.weight, 0);
  // FNV-1a over the key: cheap, stable across processes and releases.
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i += 1) hash = Math.imul(hash ^ key.charCodeAt(i), 0x01000193) >>> 0;
  let point = total > 0 ? hash % total : 0;
  for (const v of sorted) {
    if (point < v.weight) return v;
    point -= v.weight;
  }
  return sorted[sorted.length - 1];
}
