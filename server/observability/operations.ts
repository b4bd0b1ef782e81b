import type { BundledSpec } from '../platform/project-root';

/** The spec's operationId of a request, for metrics labels and trace attributes (never a raw URL or id). */
export type Spec = Pick<BundledSpec, 'paths'>;

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/** An operation a request matched: its operationId and the spec's path template (`/v1/whitelabel/user/{email}`). */
export interface MatchedOperation {
  operationId: string;
  route: string;
}

/** The operation by method and path: exact paths in a map, templated ones (`{id}`) as patterns. */
export function operationRoutes(spec: Spec): (method: string, path: string) => MatchedOperation | undefined {
  const exact = new Map<string, MatchedOperation>();
  const templated: { method: string; pattern: RegExp; operation: MatchedOperation }[] = [];
  for (const [path, item] of Object.entries(spec.paths)) {
    for (const method of METHODS) {
      const operationId = item[method]?.operationId;
      if (!operationId) continue;
      const operation = { operationId, route: path };
      if (!path.includes('{')) exact.set(`${method} ${path}`, operation);
      else {
        const source = path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+');
        templated.push({ method, pattern: new RegExp(`^${source}$`), operation });
      }
    }
  }
  return (method, path) => {
    const m = method === 'head' ? 'get' : method;
    return exact.get(`${m} ${path}`) ?? templated.find((t) => t.method === m && t.pattern.test(path))?.operation;
  };
}

/** operationId by method and path. */
export function operationMatcher(spec: Spec): (method: string, path: string) => string | undefined {
  const match = operationRoutes(spec);
  return (method, path) => match(method, path)?.operationId;
}
