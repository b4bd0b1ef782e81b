/**
 * What the spec deprecates, read once: the operations marked `deprecated: true`, and the query parameters and
 * top-level JSON body properties marked so. Each names when (`x-deprecated-at`, a date), optionally until when it
 * answers (`x-sunset`, a later date), and an operation its replacement (`x-successor`: a path or operationId of
 * the spec); `npm run lint:spec` requires them (.spectral.yaml). The generate step declares the headers on these
 * operations' answers (declareDeprecationHeaders), and the HTTP edge (http/deprecation.ts) sends them: both read
 * this list, so both refuse a date that is not one or a successor the spec does not have.
 */
const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

/** The parts of an OpenAPI document read here (the bundle, or the spec as the generate step holds it). */
export interface SpecDocument {
  paths?: object;
  components?: { parameters?: object; schemas?: object };
}

export interface Deprecated {
  at: Date;
  sunset?: Date;
  /** The path of the replacement (one named by its operationId is found by it). */
  successor?: string;
}

export interface OperationDeprecations {
  method: (typeof METHODS)[number];
  path: string;
  /** The whole operation, when it is deprecated. */
  operation?: Deprecated;
  /** Deprecated query parameters and top-level body properties, by name. */
  query: Map<string, Deprecated>;
  body: Map<string, Deprecated>;
}

type Node = Record<string, unknown>;
const isNode = (v: unknown): v is Node => typeof v === 'object' && v !== null && !Array.isArray(v);

function at(doc: SpecDocument, ref: string): unknown {
  if (!ref.startsWith('#/')) throw new Error(`${ref}: only references inside the document are read`);
  return ref
    .slice(2)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce<unknown>((node, key) => (isNode(node) ? node[key] : undefined), doc);
}

/** The object a node stands for: itself, or what its `$ref` chain points at. */
function resolve(doc: SpecDocument, node: unknown): Node | undefined {
  let value = node;
  for (let hops = 0; isNode(value) && typeof value.$ref === 'string'; hops++) {
    if (hops > 32) throw new Error(`${value.$ref}: a reference cycle`);
    value = at(doc, value.$ref);
  }
  return isNode(value) ? value : undefined;
}

function date(value: unknown, what: string): Date {
  const parsed = typeof value === 'string' ? new Date(value) : undefined;
  if (!parsed || Number.isNaN(parsed.getTime())) throw new Error(`${what} is not a date: ${JSON.stringify(value)}`);
  return parsed;
}

/** The operation's paths by operationId, to find a successor named by its id. */
function pathsById(doc: SpecDocument): Map<string, string> {
  const ids = new Map<string, string>();
  for (const [path, item] of Object.entries(doc.paths ?? {}))
    for (const method of METHODS) {
      const id = resolve(doc, (item as Node | undefined)?.[method])?.operationId;
      if (typeof id === 'string') ids.set(id, path);
    }
  return ids;
}

/**
 * A node marked `deprecated: true` (its own keys first: a `$ref` may carry them beside it), or undefined.
 * Throws when it is marked but its dates are missing or wrong, or its successor is not in the spec.
 */
function deprecatedAt(
  doc: SpecDocument,
  raw: unknown,
  where: string,
  ids: Map<string, string>,
): Deprecated | undefined {
  const node = isNode(raw) && raw.deprecated !== undefined ? raw : resolve(doc, raw);
  if (node?.deprecated !== true) return undefined;
  const since = date(node['x-deprecated-at'], `${where}: x-deprecated-at`);
  const sunset = node['x-sunset'] === undefined ? undefined : date(node['x-sunset'], `${where}: x-sunset`);
  if (sunset && sunset <= since) throw new Error(`${where}: x-sunset is not after x-deprecated-at`);
  const named = node['x-successor'];
  if (named === undefined) return { at: since, sunset };
  const paths = doc.paths as Node;
  const successor = typeof named === 'string' ? (named in paths ? named : ids.get(named)) : undefined;
  if (!successor)
    throw new Error(`${where}: x-successor ${JSON.stringify(named)} is no path or operationId of the spec`);
  return { at: since, sunset, successor };
}

/** The top-level properties of a body schema, through `$ref` and `allOf`. */
function properties(doc: SpecDocument, schema: unknown): [string, unknown][] {
  const s = resolve(doc, schema);
  if (!s) return [];
  const own = isNode(s.properties) ? Object.entries(s.properties) : [];
  const all = Array.isArray(s.allOf) ? s.allOf.flatMap((part) => properties(doc, part)) : [];
  return [...own, ...all];
}

/** Every operation that is deprecated or takes a deprecated field, with what is deprecated. */
export function deprecations(doc: SpecDocument): OperationDeprecations[] {
  const ids = pathsById(doc);
  const found: OperationDeprecations[] = [];
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const method of METHODS) {
      const op = resolve(doc, (item as Node | undefined)?.[method]);
      if (!op) continue;
      const where = `${method.toUpperCase()} ${path}`;
      const query = new Map<string, Deprecated>();
      for (const raw of Array.isArray(op.parameters) ? op.parameters : []) {
        const p = resolve(doc, raw);
        if (p?.in !== 'query' || typeof p.name !== 'string') continue;
        const d = deprecatedAt(doc, raw, `${where} query parameter ${p.name}`, ids);
        if (d) query.set(p.name, d);
      }
      const body = new Map<string, Deprecated>();
      const content = resolve(doc, op.requestBody)?.content;
      const schema =
        isNode(content) && isNode(content['application/json']) ? content['application/json'].schema : undefined;
      for (const [name, raw] of properties(doc, schema)) {
        const d = deprecatedAt(doc, raw, `${where} body property ${name}`, ids);
        if (d) body.set(name, d);
      }
      const operation = deprecatedAt(doc, op, where, ids);
      if (operation || query.size || body.size) found.push({ method, path, operation, query, body });
    }
  }
  return found;
}

/**
 * The generate step's part: a deprecated operation's success answers declare the headers http/deprecation.ts sends
 * (a shared error response, a `$ref`, is left as it is).
 */
export function declareDeprecationHeaders(op: { responses?: Record<string, object> }): void {
  for (const [status, response] of Object.entries(op.responses ?? {})) {
    if (!status.startsWith('2') || '$ref' in response) continue;
    const declared = response as { headers?: Record<string, object> };
    declared.headers = {
      ...declared.headers,
      Deprecation: { $ref: '#/components/headers/Deprecation' },
      Sunset: { $ref: '#/components/headers/Sunset' },
      Link: { $ref: '#/components/headers/Link' },
    };
  }
}
