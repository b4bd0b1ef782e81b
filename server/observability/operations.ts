import type { BundledSpec } from '../project-root';

/** The spec's operationId of a request, for metrics labels and trace attributes (never a raw URL or id). */
export type Spec = Pick<BundledSpec, 'paths'>;

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/** operationId by method and path: exact paths in a map, templated ones (`{id}`) as patterns. */
export function operationMatcher(spec: Spec): (method: string, path: string) => string | undefined {
  const exact = new Map<string, string>();
  const templated: { method: string; pattern: RegExp; operationId: string }[] = [];
  for (const [path, item] of Object.entries(spec.paths)) {
    for (const method of METHODS) {
      const operationId = item[method]?.operationId;
      if (!operationId) continue;
      if (!path.includes('{')) exact.set(`${method} ${path}`, operationId);
      else {
        const source = path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+');
        templated.push({ method, pattern: new RegExp(`^${source}$`), operationId });
      }
    }
  }
  return (method, path) => {
    const m = method === 'head' ? 'get' : method;
    return exact.get(`${m} ${path}`) ?? templated.find((t) => t.method === m && t.pattern.test(path))?.operationId;
  };
}
