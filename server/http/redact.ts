/**
 * What a logged or traced URL may not carry: the values of query parameters that are credentials (an OAuth
 * callback's `code` and `state`, any `*token*`), replaced by `REDACTED`.
 */
const SECRET_PARAMS = /^(code|state|.*token.*)$/i;

export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return url;
  const params = new URLSearchParams(url.slice(q + 1));
  let changed = false;
  for (const key of new Set(params.keys()))
    if (SECRET_PARAMS.test(key)) {
      params.set(key, 'REDACTED');
      changed = true;
    }
  return changed ? `${url.slice(0, q)}?${params.toString()}` : url;
}
