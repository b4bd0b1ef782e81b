/**
 * Deprecation announced on the wire: every answer of an operation the spec marks deprecated, and of a request that
 * sends a deprecated query parameter or body field, carries `Deprecation` (RFC 9745: `@` and the Unix seconds of
 * its `x-deprecated-at`), `Sunset` (RFC 8594, an HTTP-date, when the spec gives `x-sunset`) and `Link`: the
 * replacement (`rel="successor-version"`, from `x-successor`) and the portal's API changes page
 * (`rel="deprecation"`). The headers are made once, at start-up, from platform/deprecation.ts's list; a request
 * only looks its path up among the deprecated operations (none: the middleware passes every request on).
 */
import type { NextFunction, Request, Response } from 'express';
import { deprecations, type Deprecated, type SpecDocument } from '../platform/deprecation';

/** Where the portal says what changed and when (docs/api-changes.md, the portal's "API changes" guide). */
const DEPRECATION_DOCS = '/docs/#/section/api-changes';

type Headers = [string, string][];

interface Entry {
  method: string;
  /** The path as Express routes it: any case, an optional trailing slash, `{id}` any one segment. */
  pattern: RegExp;
  operation?: Headers;
  query: [string, Headers][];
  body: [string, Headers][];
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

function headers(d: Deprecated): Headers {
  const links = [`<${DEPRECATION_DOCS}>; rel="deprecation"; type="text/html"`];
  if (d.successor) links.unshift(`<${d.successor}>; rel="successor-version"`);
  // Written by hand: an sf-date is `@` and whole seconds, and toUTCString() is the IMF-fixdate RFC 8594 asks for.
  return [
    ['Deprecation', `@${Math.floor(d.at.getTime() / 1000)}`],
    ...(d.sunset ? [['Sunset', d.sunset.toUTCString()] as [string, string]] : []),
    ['Link', links.join(', ')],
  ];
}

export function deprecationHeaders(spec: SpecDocument) {
  const entries: Entry[] = deprecations(spec).map((d) => ({
    method: d.method.toUpperCase(),
    pattern: new RegExp(`^${escape(d.path).replace(/\\\{\w+\\\}/g, '[^/]+')}/?$`, 'i'),
    operation: d.operation && headers(d.operation),
    query: [...d.query].map(([name, field]) => [name, headers(field)]),
    body: [...d.body].map(([name, field]) => [name, headers(field)]),
  }));
  return (req: Request, res: Response, next: NextFunction): void => {
    const entry = entries.length ? entries.find((e) => e.method === req.method && e.pattern.test(req.path)) : undefined;
    if (entry) {
      const query = req.query as Record<string, unknown>;
      const body: unknown = req.body;
      const sent =
        entry.operation ??
        entry.query.find(([name]) => query[name] !== undefined)?.[1] ??
        entry.body.find(([name]) => typeof body === 'object' && body !== null && name in body)?.[1];
      for (const [name, value] of sent ?? []) res.setHeader(name, value);
    }
    next();
  };
}
