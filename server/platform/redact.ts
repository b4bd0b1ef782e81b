/**
 * What a log line or an exported span may not carry of a URL: its user info and its query's values (an OAuth
 * callback's `code`, a webhook URL's `?hooksecret=`, a contact's address in a search). Both are replaced by
 * `REDACTED`; the scheme, host, path and the query's names stay, so a line still says what was asked. The
 * fragment, never sent to a server, is dropped.
 */
const USERINFO = /^([a-z][a-z0-9+.-]*:\/\/)[^/?#]*@/i;

/** One URL, absolute or a path with its query (`/oauth/callback?state=REDACTED&code=REDACTED`). */
export function redactUrl(url: string): string {
  const [sent] = url.split('#', 1);
  const q = sent.indexOf('?');
  const base = (q < 0 ? sent : sent.slice(0, q)).replace(USERINFO, '$1REDACTED@');
  if (q < 0) return base;
  const names = [...new Set(new URLSearchParams(sent.slice(q + 1)).keys())];
  return `${base}?${names.map((name) => `${encodeURIComponent(name)}=REDACTED`).join('&')}`;
}

// Up to a quote, space, angle bracket or backslash: a URL quoted in a JSON line ends before its escaped quote.
const ABSOLUTE_URL = /\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>\\]+/gi;

/** Every absolute URL a text quotes (a message, an error, a span attribute), each redacted as by `redactUrl`. */
export const redactUrls = (text: string): string => text.replace(ABSOLUTE_URL, redactUrl);
