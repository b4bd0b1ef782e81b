/**
 * Text the database cannot store: PostgreSQL refuses NUL characters in text and JSON, and an unpaired
 * UTF-16 surrogate (`"\ud800"` in JSON) is not Unicode at all. Such input answers 400 naming the field,
 * in bodies, query strings and paths alike, instead of failing deep in a query. One linear pass.
 */
import type { NextFunction, Request, Response } from 'express';
import { invalid, detail, type FieldProblem } from '../platform/errors';

// A NUL, a high surrogate not followed by a low one, or a low surrogate not preceded by a high one.
const UNSAFE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** The path (`contacts.3.email`) of the first unsafe string or key in `value`, or null. */
function findUnsafe(value: unknown): string | null {
  const stack: [unknown, string][] = [[value, '']];
  while (stack.length) {
    const [v, path] = stack.pop()!;
    if (typeof v === 'string') {
      if (UNSAFE.test(v)) return path;
    } else if (v && typeof v === 'object') {
      for (const [k, child] of Object.entries(v)) {
        const childPath = path ? `${path}.${k}` : k;
        if (UNSAFE.test(k)) return childPath;
        stack.push([child, childPath]);
      }
    }
  }
  return null;
}

const problem = (field: string, location: FieldProblem['location']) =>
  invalid(
    `${[location, field].filter(Boolean).join('.')} contains a NUL character or an unpaired surrogate, which text may not contain.`,
    [detail(field, 'must not contain NUL characters or unpaired UTF-16 surrogates', 'invalid_text', location)],
  );

export function rejectUnsafeText(req: Request, _res: Response, next: NextFunction): void {
  let path: string | null = null;
  try {
    path = decodeURIComponent(req.path);
  } catch {
    // Not valid percent-encoded UTF-8: the validator answers it.
  }
  if (path !== null && UNSAFE.test(path)) throw problem('url', 'path');
  const inQuery = findUnsafe(req.query);
  if (inQuery !== null) throw problem(inQuery, 'query');
  const inBody = findUnsafe(req.body);
  if (inBody !== null) throw problem(inBody, 'body');
  next();
}
