/**
 * Every bound the spec states on a request field is the bound the server enforces: for each bounded top-level
 * body field and query parameter of every operation, the largest (or smallest) allowed value is accepted and one
 * past it is a 400 naming the field. The cases are read from the bundle, so a bound added to the spec is tested
 * here with no change to this file.
 *
 * The key holds only `usage:read`: validation runs before the scope check, so a request within its bounds
 * answers 403 (or runs a harmless read) and changes nothing, and one past a bound answers 400. Most of the time is
 * the validator compiling each operation's schema on its first request (seconds apiece on a loaded machine).
 */
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { readBundledSpec } from '../../server/platform/project-root';
import { describeOnEmbeddedDatabase } from '../helpers/binaries';
import { startTestServer, type TestServer } from '../helpers/server';

interface Schema {
  $ref?: string;
  type?: string | string[];
  format?: string;
  pattern?: string;
  enum?: unknown[];
  const?: unknown;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  maxItems?: number;
  uniqueItems?: boolean;
  items?: Schema;
  properties?: Record<string, Schema>;
  allOf?: Schema[];
}
interface Parameter {
  name: string;
  in: string;
  schema?: Schema;
  example?: unknown;
}
interface Operation {
  parameters?: (Parameter | { $ref: string })[];
  requestBody?: {
    content?: Record<string, { schema?: Schema; example?: unknown; examples?: Record<string, { value?: unknown }> }>;
  };
}

const spec = readBundledSpec() as unknown as {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema>; parameters: Record<string, Parameter> };
};

function deref<T>(o: T | { $ref: string }): T {
  let node = o as { $ref?: string };
  while (node?.$ref) {
    const [, section, name] = node.$ref.replace('#/components/', '').match(/^(\w+)\/(.+)$/) ?? [];
    node = (spec.components as unknown as Record<string, Record<string, object>>)[section][name];
  }
  return node as T;
}

const typesOf = (s: Schema) => (Array.isArray(s.type) ? s.type : [s.type]);
const isPlainString = (s: Schema) =>
  typesOf(s).includes('string') && !s.format && !s.pattern && !s.enum && s.const === undefined;

/** n distinct values an array's items accept, or undefined when this test cannot make them. */
function itemsFor(items: Schema, n: number, example: unknown[] | undefined): unknown[] | undefined {
  const s = deref(items);
  if (s.format === 'uuid')
    return Array.from({ length: n }, (_, i) => `0192f0c4-8f1e-7cc3-9d42-${String(i).padStart(12, '0')}`);
  if (s.format === 'email') return Array.from({ length: n }, (_, i) => `user${i}@acme.com`);
  if (isPlainString(s)) return Array.from({ length: n }, (_, i) => `item${i}`.slice(0, s.maxLength ?? 16));
  if (example?.length && !s.enum) return Array.from({ length: n }, () => example[0]);
  return undefined;
}

interface Case {
  operation: string;
  field: string;
  allowed: unknown;
  past: unknown;
  send: (value: unknown) => Promise<Response>;
}

/** The within-bounds and past-bound values of one field, one pair per bound. */
function valuesFor(schema: Schema, example: unknown): [unknown, unknown][] {
  const s = deref(schema);
  const pairs: [unknown, unknown][] = [];
  if (isPlainString(s) && s.maxLength !== undefined) pairs.push(['a'.repeat(s.maxLength), 'a'.repeat(s.maxLength + 1)]);
  if (typesOf(s).includes('integer') && !s.enum && s.const === undefined) {
    if (s.maximum !== undefined) pairs.push([s.maximum, s.maximum + 1]);
    if (s.minimum !== undefined) pairs.push([s.minimum, s.minimum - 1]);
  }
  if (typesOf(s).includes('array') && s.maxItems !== undefined && s.items && !(s.uniqueItems && deref(s.items).enum)) {
    const values = itemsFor(s.items, s.maxItems + 1, Array.isArray(example) ? example : undefined);
    if (values && (!s.uniqueItems || typeof values[0] !== 'object')) pairs.push([values.slice(0, -1), values]);
  }
  return pairs;
}

function bodyExample(op: Operation): Record<string, unknown> | undefined {
  const media = op.requestBody?.content?.['application/json'];
  if (!media) return undefined;
  const value = media.example ?? Object.values(media.examples ?? {})[0]?.value;
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

function properties(schema: Schema): Record<string, Schema> {
  const s = deref(schema);
  return Object.assign({}, s.properties, ...(s.allOf ?? []).map(properties)) as Record<string, Schema>;
}

let t: TestServer;
let apiKey: string;

function cases(): Case[] {
  const out: Case[] = [];
  for (const [path, item] of Object.entries(spec.paths)) {
    // Each operation once, under /v2, whose error body names the field.
    if (!path.startsWith('/v2/')) continue;
    for (const [method, op] of Object.entries(item)) {
      const operation = `${method.toUpperCase()} ${path}`;
      const parameters = (op.parameters ?? []).map((p) => deref<Parameter>(p));
      const url = path.replace(/\{(\w+)\}/g, (_, name: string) => {
        const example = parameters.find((q) => q.name === name)?.example;
        return encodeURIComponent(typeof example === 'string' ? example : '0192f0c4-8f1e-7cc3-9d42-5c1b1f7c2a10');
      });
      const query = Object.fromEntries(
        parameters.filter((p) => p.in === 'query' && p.example !== undefined).map((p) => [p.name, String(p.example)]),
      );
      const body = bodyExample(op);
      const send = (q: Record<string, string>, b: unknown) =>
        t.fetch(`${url}?${new URLSearchParams(q)}`, {
          method: method.toUpperCase(),
          apiKey,
          ...(b === undefined ? {} : { body: JSON.stringify(b), headers: { 'Content-Type': 'application/json' } }),
        });
      for (const p of parameters.filter((q) => q.in === 'query' && q.schema)) {
        for (const [allowed, past] of valuesFor(p.schema!, p.example)) {
          if (Array.isArray(allowed)) continue;
          out.push({
            operation,
            field: `query.${p.name}`,
            allowed,
            past,
            send: (v) => send({ ...query, [p.name]: String(v) }, body),
          });
        }
      }
      if (!body) continue;
      const schema = op.requestBody!.content!['application/json'].schema!;
      for (const [name, field] of Object.entries(properties(schema))) {
        for (const [allowed, past] of valuesFor(field, body[name])) {
          out.push({
            operation,
            field: `body.${name}`,
            allowed,
            past,
            send: (v) => send(query, { ...body, [name]: v }),
          });
        }
      }
    }
  }
  return out;
}

interface ErrorBody {
  details?: { field: string }[];
}

beforeAll(async () => {
  t = await startTestServer();
  const ws = await t.createWorkspace();
  const created = await ws.client.POST('/v2/api-key/create', { body: { name: 'bounds', scopes: ['usage:read'] } });
  apiKey = created.data!.data.apiKey;
});
afterAll(() => t?.close());

// Validation answers before any storage: one database proves it.
describeOnEmbeddedDatabase()('the bounds the spec states', () => {
  it('are the bounds the server enforces, on every bounded body field and query parameter', async () => {
    const all = cases();
    // Enough of the spec is bounded that a loader that found nothing would show here.
    expect(all.length).toBeGreaterThan(100);
    const wrong: string[] = [];
    for (const c of all) {
      const within = await c.send(c.allowed);
      const withinBody = (await within.json()) as ErrorBody;
      if (within.status === 400 && withinBody.details?.some((d) => d.field === c.field))
        wrong.push(`${c.operation} ${c.field}: refused the bound itself (${JSON.stringify(withinBody)})`);
      const outside = await c.send(c.past);
      const outsideBody = (await outside.json()) as ErrorBody;
      if (outside.status !== 400 || !outsideBody.details?.some((d) => d.field === c.field))
        wrong.push(
          `${c.operation} ${c.field}: one past the bound answered ${outside.status} ${JSON.stringify(outsideBody ?? '')}`,
        );
    }
    expect(wrong).toEqual([]);
  }, 900_000);
});
