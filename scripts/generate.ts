/**
 * Builds everything that is derived from `spec/`:
 *   generated/openapi.json  the bundle the server, validator, docs, mock and tests read
 *   generated/api.d.ts      openapi-typescript types for the server and the client
 *
 * The bundle is `redocly bundle` plus the steps the seed's versioning needs, done here so that
 * the source spec states every operation once:
 *   - every `/v1/...` path item is served again as `/v2/...` (operationId + `V2`, v2 error bodies);
 *   - every operation gets the platform-wide answers it can always give (413/415 with a body,
 *     500, 503) and the standard headers on its success responses (request id, quota, CORS origin);
 *   - a `/v2` operation may only answer v2 error bodies, a `/v1` one only v1 bodies;
 *   - an array of unique values drawn from an enum with no `maxItems` of its own (a webhook's event types)
 *     is bounded by the enum's size, so the bound follows the list as it grows;
 *   - an operation that takes `Idempotency-Key` answers 409 (still running) and 422 (key reused) and
 *     may send `Idempotent-Replayed`; generated/idempotent-operations.json lists these operations
 *     for the client;
 *   - a deprecated operation, or one that takes a deprecated field, may send `Deprecation`, `Sunset` and `Link`
 *     on its success answers (its dates and successor are checked here as the server checks them at start-up).
 *
 * generated/mcp-tools.json is the MCP server's tools, one per operation (scripts/mcp-tools.ts).
 *
 * `--check` writes nothing and exits 1 when generated/ differs from what the spec gives.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync, mkdirSync, existsSync, renameSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import openapiTS, {
  astToString,
  type OpenAPI3,
  type OperationObject,
  type PathItemObject,
  type ReferenceObject,
  type ResponseObject,
} from 'openapi-typescript';
import { declareDeprecationHeaders, deprecations } from '../server/platform/deprecation';
import { mcpTools } from './mcp-tools';

const root = resolve(__dirname, '..');
const outDir = join(root, 'generated');
const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;
const RESPONSE_REF = '#/components/responses/';

function bundle(): OpenAPI3 {
  const dir = mkdtempSync(join(tmpdir(), 'bundle-'));
  const file = join(dir, 'openapi.json');
  try {
    execFileSync(
      join(root, 'node_modules/.bin/redocly'),
      ['bundle', 'spec/openapi.yaml', '--ext', 'json', '-o', file],
      {
        cwd: root,
        stdio: 'pipe',
      },
    );
  } catch (err) {
    // Redocly's output (banners included) is only worth showing when the bundle failed.
    const e = err as { stdout?: Buffer; stderr?: Buffer };
    throw new Error(`redocly bundle failed:\n${e.stdout?.toString() ?? ''}${e.stderr?.toString() ?? ''}`);
  }
  // Redocly bundled and validated it as an OpenAPI document (npm run lint:spec holds it to our rules).
  return JSON.parse(readFileSync(file, 'utf8')) as OpenAPI3;
}

const isRef = (o: object): o is ReferenceObject => '$ref' in o;

/** A path item or response the steps below change in place: the bundle writes these inline, never as a $ref. */
function inline<T extends object>(o: T | ReferenceObject | undefined, where: string): T {
  if (!o || isRef(o))
    throw new Error(`${where}: expected an inline object in the bundle, found ${o ? o.$ref : 'nothing'}`);
  return o;
}

function operations(pathItem: PathItemObject, where: string): [(typeof METHODS)[number], OperationObject][] {
  return METHODS.flatMap((m) => (pathItem[m] ? [[m, inline(pathItem[m], `${where} ${m}`)] as const] : []));
}

/** The name of the same error response in the other format. */
function errorResponseFor(version: 'v1' | 'v2', name: string): string {
  const base = name.replace(/V2$/, '');
  return version === 'v2' ? `${base}V2` : base;
}

function setErrorVersion(op: OperationObject, version: 'v1' | 'v2', where: string, strict: boolean): void {
  for (const [status, response] of Object.entries(op.responses ?? {})) {
    if (!isRef(response) || !response.$ref.startsWith(RESPONSE_REF)) continue;
    const name = response.$ref.slice(RESPONSE_REF.length);
    const wanted = errorResponseFor(version, name);
    if (strict && wanted !== name) {
      throw new Error(`${where} answers ${status} with ${name}: a ${version} operation must use ${wanted}`);
    }
    response.$ref = RESPONSE_REF + wanted;
  }
}

function addPlatformResponses(op: OperationObject, version: 'v1' | 'v2'): void {
  const responses = (op.responses ??= {});
  const add = (status: string, name: string) => {
    responses[status] ??= { $ref: RESPONSE_REF + errorResponseFor(version, name) };
  };
  if (op.requestBody) {
    add('413', 'PayloadTooLarge');
    add('415', 'UnsupportedMediaType');
  }
  // Any operation answers 403 to a key without the scope it declares (server/http/scopes.ts).
  add('403', 'Forbidden');
  add('500', 'InternalError');
  add('503', 'ServiceUnavailable');
  for (const [status, response] of Object.entries(responses)) {
    if (!status.startsWith('2') || isRef(response)) continue;
    response.headers = {
      'X-Request-Id': { $ref: '#/components/headers/XRequestId' },
      'RateLimit-Policy': { $ref: '#/components/headers/RateLimitPolicy' },
      RateLimit: { $ref: '#/components/headers/RateLimit' },
      'Access-Control-Allow-Origin': { $ref: '#/components/headers/AccessControlAllowOrigin' },
      ...response.headers,
    };
  }
}

const IDEMPOTENCY_KEY = '#/components/parameters/IdempotencyKey';

function takesIdempotencyKey(op: OperationObject): boolean {
  return (op.parameters ?? []).some((p) => isRef(p) && p.$ref === IDEMPOTENCY_KEY);
}

/**
 * The answers of the idempotency layer. An operation that already answers 409 for its own
 * conflicts gets one 409 response that describes both and shows both examples.
 */
function addIdempotencyResponses(
  op: OperationObject,
  version: 'v1' | 'v2',
  components: Record<string, ResponseObject | ReferenceObject>,
): void {
  const responses = (op.responses ??= {});
  const component = (name: string) => inline(components[name], `components.responses.${name}`);
  const inProgress = errorResponseFor(version, 'IdempotencyInProgress');
  responses['422'] ??= { $ref: RESPONSE_REF + errorResponseFor(version, 'IdempotencyKeyReused') };
  const own = responses['409'];
  if (!own) {
    responses['409'] = { $ref: RESPONSE_REF + inProgress };
  } else {
    const ownResponse = isRef(own) ? component(own.$ref.slice(RESPONSE_REF.length)) : own;
    const idem = component(inProgress);
    const idemDescription = idem.description.replace(/^\(v2 error format\) /, '');
    const content = ownResponse.content?.['application/json'];
    responses['409'] = {
      ...ownResponse,
      description: `${ownResponse.description} Or: ${idemDescription[0].toLowerCase()}${idemDescription.slice(1)}`,
      content: {
        'application/json': {
          ...content,
          examples: { ...content?.examples, ...idem.content?.['application/json']?.examples },
        },
      },
    };
  }
  for (const [status, response] of Object.entries(responses)) {
    if (!status.startsWith('2') || isRef(response)) continue;
    response.headers = {
      ...response.headers,
      'Idempotent-Replayed': { $ref: '#/components/headers/IdempotentReplayed' },
    };
  }
}

const SCHEMA_REF = '#/components/schemas/';

/**
 * Sets `maxItems` on every array of unique enum values that has none: at most one of each value. Walks the
 * whole document, since the bundle writes such arrays inline as well as under components.
 */
function boundEnumSets(doc: unknown, schemas: Record<string, unknown>): void {
  const enumOf = (items: unknown): unknown[] | undefined => {
    if (!items || typeof items !== 'object') return undefined;
    const ref = (items as { $ref?: string }).$ref;
    const target = ref?.startsWith(SCHEMA_REF) ? schemas[ref.slice(SCHEMA_REF.length)] : items;
    const values = (target as { enum?: unknown } | undefined)?.enum;
    return Array.isArray(values) ? values : undefined;
  };
  const visit = (node: unknown): void => {
    if (!node || typeof node !== 'object') return;
    if (Array.isArray(node)) return node.forEach(visit);
    const schema = node as { type?: unknown; uniqueItems?: unknown; maxItems?: unknown; items?: unknown };
    const values = schema.type === 'array' && schema.uniqueItems === true ? enumOf(schema.items) : undefined;
    if (values && schema.maxItems === undefined) schema.maxItems = values.length;
    Object.values(node).forEach(visit);
  };
  visit(doc);
}

function sortKeys<T>(o: Record<string, T>): Record<string, T> {
  const sorted = Object.keys(o).sort((a, b) => a.localeCompare(b, 'en'));
  return Object.fromEntries(sorted.map((k) => [k, o[k]]));
}

export function deriveBundle(spec: OpenAPI3): OpenAPI3 {
  const written = spec.paths ?? {};
  const paths: Record<string, PathItemObject> = {};
  for (const [path, entry] of Object.entries(written)) {
    if (!path.startsWith('/v1/') && !path.startsWith('/v2/')) throw new Error(`${path}: paths start with /v1/ or /v2/`);
    const version = path.startsWith('/v2/') ? 'v2' : 'v1';
    const item = inline(entry, path);
    for (const [, op] of operations(item, path)) setErrorVersion(op, version, `${path} ${op.operationId}`, true);
    paths[path] = item;
  }
  for (const [path, item] of Object.entries(paths)) {
    if (!path.startsWith('/v1/')) continue;
    const alias = '/v2' + path.slice(3);
    if (written[alias]) throw new Error(`${alias} is written in the spec, but it is the /v2 alias of ${path}`);
    const copy = structuredClone(item);
    for (const [, op] of operations(copy, alias)) {
      op.operationId = `${op.operationId}V2`;
      setErrorVersion(op, 'v2', alias, false);
    }
    paths[alias] = copy;
  }
  const deprecated = new Set(deprecations({ ...spec, paths }).map((d) => `${d.method} ${d.path}`));
  for (const [path, item] of Object.entries(paths)) {
    const version = path.startsWith('/v2/') ? 'v2' : 'v1';
    for (const [method, op] of operations(item, path)) {
      addPlatformResponses(op, version);
      if (takesIdempotencyKey(op)) addIdempotencyResponses(op, version, spec.components?.responses ?? {});
      if (deprecated.has(`${method} ${path}`)) declareDeprecationHeaders(op);
    }
  }
  const derived = { ...spec, paths: sortKeys(paths) };
  boundEnumSets(derived, spec.components?.schemas ?? {});
  return derived;
}

/** `POST /v2/campaign/create` for every operation that takes `Idempotency-Key` (the client sends one). */
export function idempotentOperations(bundle: OpenAPI3): string[] {
  return Object.entries(bundle.paths ?? {}).flatMap(([path, item]) =>
    operations(inline(item, path), path).flatMap(([m, op]) =>
      takesIdempotencyKey(op) ? [`${m.toUpperCase()} ${path}`] : [],
    ),
  );
}

async function main(): Promise<void> {
  const check = process.argv.includes('--check');
  const spec = bundle();
  const derived = deriveBundle(spec);
  const openapiJson = JSON.stringify(derived, null, 2) + '\n';
  // defaultNonNullable off: a request field with a default is optional to the caller (the validator fills it in).
  const ast = await openapiTS(derived, { alphabetize: true, defaultNonNullable: false });
  const header = '/**\n * Generated by scripts/generate.ts from spec/ with openapi-typescript. Do not edit.\n */\n\n';
  const apiDts = header + astToString(ast);

  const files: Record<string, string> = {
    'openapi.json': openapiJson,
    'api.d.ts': apiDts,
    'idempotent-operations.json': JSON.stringify(idempotentOperations(derived), null, 2) + '\n',
    'mcp-tools.json': JSON.stringify(mcpTools(derived), null, 2) + '\n',
  };
  if (check) {
    const stale = Object.entries(files).filter(
      ([name, text]) => !existsSync(join(outDir, name)) || readFileSync(join(outDir, name), 'utf8') !== text,
    );
    if (stale.length) {
      console.error(
        `generated/ is out of date (${stale.map(([n]) => n).join(', ')}): run npm run generate and commit.`,
      );
      process.exit(1);
    }
    console.log('generated/ is in sync with spec/');
    return;
  }
  mkdirSync(outDir, { recursive: true });
  for (const [name, text] of Object.entries(files)) {
    // Write then rename, so a reader never sees half a file.
    const tmp = join(outDir, `.${name}.${process.pid}`);
    writeFileSync(tmp, text);
    renameSync(tmp, join(outDir, name));
  }
  const count = Object.entries(derived.paths ?? {}).reduce(
    (n, [path, item]) => n + operations(inline(item, path), path).length,
    0,
  );
  console.log(`generated/openapi.json, api.d.ts and mcp-tools.json: ${count} operations`);
}

if (require.main === module) {
  main().catch((err) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
}
