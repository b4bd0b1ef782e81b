/**
 * generated/mcp-tools.json: one MCP tool per operation of the bundle, in its `/v2` form (a `/v1` operation's
 * `/v2` alias is its tool; no operation twice), read by the MCP server (server/mcp/).
 *
 *   name          the operationId as written in spec/paths (an alias's `V2` dropped): `createCampaign`
 *   title         the summary; description: the summary and the description
 *   inputSchema   an object of the path and query parameters by name, `body` (the JSON request body, as the
 *                 spec has it) and `idempotencyKey` (the `Idempotency-Key` header) where the operation takes them;
 *                 every `$ref` written out in place, so each schema stands alone
 *   outputSchema  the whole JSON success body (the envelope) where there is one
 *   annotations   readOnlyHint for reads, destructiveHint for deletes and removals, idempotentHint where the
 *                 operation takes `Idempotency-Key`
 *   operation     what the server needs to call it (not sent to MCP clients): method, path, where each input goes,
 *                 the scope it needs and its tag
 */
import type {
  MediaTypeObject,
  OpenAPI3,
  OperationObject,
  ParameterObject,
  PathItemObject,
  ReferenceObject,
  RequestBodyObject,
  ResponseObject,
} from 'openapi-typescript';
import type { McpTool } from '../server/mcp/tools';

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;
const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;
const IDEMPOTENCY_HEADER = 'Idempotency-Key';
/** The names of inputs that are not a parameter of the operation. */
const BODY = 'body';
const IDEMPOTENCY_KEY = 'idempotencyKey';

type JsonSchema = Record<string, unknown>;

const isRef = (o: object): o is ReferenceObject => '$ref' in o;

/** Follows `#/components/...` references of the bundle, writing each out in place. */
function resolver(doc: OpenAPI3) {
  const target = (ref: string): unknown => {
    if (!ref.startsWith('#/')) throw new Error(`${ref}: only references within the bundle are written out`);
    let node: unknown = doc;
    for (const part of ref.slice(2).split('/')) node = (node as Record<string, unknown>)[part];
    if (node === undefined) throw new Error(`${ref}: not in the bundle`);
    return node;
  };
  const inline = (node: unknown, seen: string[] = []): unknown => {
    if (!node || typeof node !== 'object') return node;
    if (Array.isArray(node)) return node.map((n) => inline(n, seen));
    const ref = (node as { $ref?: unknown }).$ref;
    if (typeof ref === 'string') {
      if (seen.includes(ref)) throw new Error(`${ref} refers to itself: a tool's schema cannot write it out`);
      const { $ref: _ref, ...siblings } = node as Record<string, unknown>;
      const resolved = inline(target(ref), [...seen, ref]) as Record<string, unknown>;
      return Object.keys(siblings).length ? { ...resolved, ...(inline(siblings, seen) as object) } : resolved;
    }
    return Object.fromEntries(
      Object.entries(node)
        // Vendor extensions and examples say nothing a validator or an agent's input needs.
        .filter(([k]) => !k.startsWith('x-') && k !== 'example')
        .map(([k, v]) => [k, inline(v, seen)]),
    );
  };
  return <T>(node: unknown): T => inline(node) as T;
}

/** The seed's operationId: a `/v2` alias's operationId is the `/v1` one with `V2` after it. */
function toolName(path: string, op: OperationObject, aliases: Set<string>): string {
  const id = op.operationId;
  if (!id) throw new Error(`${path}: an operation without an operationId has no tool name`);
  const name = aliases.has(path) ? id.replace(/V2$/, '') : id;
  if (!TOOL_NAME.test(name)) throw new Error(`${name}: a tool name is 1-64 of [A-Za-z0-9_-]`);
  return name;
}

function successSchema(
  op: OperationObject,
  resolve: ReturnType<typeof resolver>,
): (JsonSchema & { type: 'object' }) | undefined {
  const [, response] = Object.entries(op.responses ?? {}).find(([status]) => status.startsWith('2')) ?? [];
  if (!response) return undefined;
  const json = resolve<ResponseObject>(response).content?.['application/json'];
  const schema = json ? resolve<MediaTypeObject>(json).schema : undefined;
  if (!schema) return undefined;
  const resolved = resolve<JsonSchema>(schema);
  // MCP's outputSchema is an object's schema; the envelope is one.
  return resolved.type !== undefined && resolved.type !== 'object' ? undefined : { ...resolved, type: 'object' };
}

export function mcpTools(bundle: OpenAPI3): McpTool[] {
  const resolve = resolver(bundle);
  const paths = bundle.paths ?? {};
  const aliases = new Set(
    Object.keys(paths)
      .filter((p) => p.startsWith('/v1/'))
      .map((p) => '/v2' + p.slice(3)),
  );
  const tools: McpTool[] = [];
  for (const [path, entry] of Object.entries(paths)) {
    if (!path.startsWith('/v2/')) continue;
    if (!entry || isRef(entry)) throw new Error(`${path}: expected an inline path item in the bundle`);
    const item: PathItemObject = entry;
    for (const method of METHODS) {
      const op = item[method];
      if (!op || isRef(op)) continue;
      const name = toolName(path, op, aliases);
      const parameters = [...(item.parameters ?? []), ...(op.parameters ?? [])].map((p) => resolve<ParameterObject>(p));
      const properties: Record<string, JsonSchema> = {};
      const required: string[] = [];
      const input = (
        inputName: string,
        schema: JsonSchema | undefined,
        description: string | undefined,
        needed: boolean,
      ) => {
        if (properties[inputName]) throw new Error(`${name}: two inputs named ${inputName}`);
        properties[inputName] = { ...(schema ?? {}), ...(description ? { description } : {}) };
        if (needed) required.push(inputName);
      };
      const at = (where: ParameterObject['in']) => parameters.filter((p) => p.in === where).map((p) => p.name);
      for (const p of parameters) {
        if (p.in === 'header' && p.name !== IDEMPOTENCY_HEADER)
          throw new Error(`${name}: header ${p.name} has no input`);
        if (p.in === 'cookie') throw new Error(`${name}: cookie ${p.name} has no input`);
        const inputName = p.in === 'header' ? IDEMPOTENCY_KEY : p.name;
        input(inputName, p.schema ? resolve<JsonSchema>(p.schema) : undefined, p.description, p.required === true);
      }
      const body = op.requestBody ? resolve<RequestBodyObject>(op.requestBody) : undefined;
      const bodyJson = body?.content['application/json'];
      const bodySchema = bodyJson ? resolve<MediaTypeObject>(bodyJson).schema : undefined;
      if (body && !bodySchema) throw new Error(`${name}: a request body without JSON has no input`);
      if (bodySchema) input(BODY, resolve<JsonSchema>(bodySchema), body?.description, body?.required === true);
      const scope = (op as Record<string, unknown>)['x-required-scope'];
      if (typeof scope !== 'string') throw new Error(`${name}: no x-required-scope`);
      const idempotencyKey = Boolean(properties[IDEMPOTENCY_KEY]);
      const readOnly = method === 'get';
      const title = op.summary ?? name;
      const outputSchema = successSchema(op, resolve);
      tools.push({
        name,
        title,
        description: [op.summary, op.description?.trim()].filter(Boolean).join('\n\n'),
        inputSchema: {
          type: 'object',
          properties,
          ...(required.length ? { required } : {}),
          additionalProperties: false,
        },
        ...(outputSchema ? { outputSchema } : {}),
        annotations: {
          title,
          readOnlyHint: readOnly,
          destructiveHint: method === 'delete' || /^(delete|remove|revoke)/.test(name),
          idempotentHint: idempotencyKey,
        },
        operation: {
          method,
          path,
          pathParams: at('path'),
          queryParams: at('query'),
          body: Boolean(bodySchema),
          idempotencyKey,
          scope,
          tag: op.tags?.[0] ?? '',
          segment: path.split('/')[2],
        },
      });
    }
  }
  const names = new Set<string>();
  for (const { name } of tools) {
    if (names.has(name)) throw new Error(`two operations make the tool ${name}`);
    names.add(name);
  }
  return tools.sort((a, b) => a.name.localeCompare(b.name, 'en'));
}
