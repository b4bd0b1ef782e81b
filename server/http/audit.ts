/** What a request names and sends, as the audit log records it (server/platform/audit.ts): ids and field names, never values. */
const MAX_TARGETS = 100;

/** Ids a request names: values of `id`, `...Id` and `...Ids` in its path, query and body. */
export function targetIdsOf(...sources: unknown[]): string[] {
  const ids = new Set<string>();
  for (const source of sources) {
    if (!source || typeof source !== 'object' || Array.isArray(source)) continue;
    for (const [name, value] of Object.entries(source as Record<string, unknown>)) {
      if (name !== 'id' && !/Ids?$/.test(name)) continue;
      for (const v of Array.isArray(value) ? value : [value]) {
        if (typeof v === 'string' && v.length <= 100 && ids.size < MAX_TARGETS) ids.add(v);
      }
    }
  }
  return [...ids];
}

/** The names of the body's fields, never their values. */
export function fieldsOf(body: unknown): string[] {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return [];
  return Object.keys(body).slice(0, 50);
}
