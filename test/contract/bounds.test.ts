/**
 * Every bound the spec states on a request field is the bound the server enforces: for each bounded query
 * parameter and each bounded body field of every operation, at any depth (a sequence step's variants' subject and
 * body, a contact's custom variables, an id list and its ids), the largest (or smallest) allowed value is accepted
 * and one past it is a 400 naming the field's path (`body.steps.0.variants.0.subject`). The cases are read from the
 * bundle, walked together with the operation's fullest example, so a bound added to the spec is tested here with
 * no change to this file.
 *
 * The accepted side takes two requests per operation, each carrying many values at their bound at once: every
 * string at its longest and number at its largest, then every number at its smallest and every list and map at
 * its most entries. Each must pass validation whole (a 400, or a 413 for a body too large to check, is a failure).
 * One past a bound is a request of its own, as a 400 names only the first field it refuses.
 *
 * The key holds only `usage:read`: validation runs before the scope check, so a request within its bounds
 * answers 403 (or runs a harmless read) and changes nothing, and one past a bound answers 400. Most of the time is
 * the validator compiling each operation's schema on its first request (seconds apiece on a loaded machine).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readBundledSpec } from '../../server/platform/project-root';
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
  maxProperties?: number;
  uniqueItems?: boolean;
  items?: Schema;
  properties?: Record<string, Schema>;
  additionalProperties?: Schema | boolean;
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

/** A schema with its `$ref` followed and its `allOf` parts' properties merged in. */
function resolved(schema: Schema): Schema {
  const s = deref(schema);
  if (!s.allOf) return s;
  const parts = s.allOf.map(resolved);
  return {
    ...s,
    properties: Object.assign({}, s.properties, ...parts.map((p) => p.properties)) as Schema['properties'],
  };
}

const typesOf = (s: Schema) => (Array.isArray(s.type) ? s.type : [s.type]);
const isPlainString = (s: Schema) =>
  typesOf(s).includes('string') && !s.format && !s.pattern && !s.enum && s.const === undefined;
const isNumber = (s: Schema) =>
  (typesOf(s).includes('integer') || typesOf(s).includes('number')) && !s.enum && s.const === undefined;

/**
 * n values an array's items accept, distinct when `unique` (all but the last within the items' own bounds), or
 * undefined when this test cannot make them.
 */
function itemsFor(items: Schema, n: number, unique: boolean, example: unknown): unknown[] | undefined {
  const s = deref(items);
  if (s.format === 'uuid')
    return Array.from({ length: n }, (_, i) => `0192f0c4-8f1e-7cc3-9d42-${String(i).padStart(12, '0')}`);
  if (s.format === 'email') return Array.from({ length: n }, (_, i) => `user${i}@acme.com`);
  if (isPlainString(s)) return Array.from({ length: n }, (_, i) => `item${i}`.slice(0, s.maxLength ?? 16));
  if (isNumber(s) && unique) {
    const from = s.minimum ?? 0;
    return s.maximum === undefined || from + n - 2 <= s.maximum
      ? Array.from({ length: n }, (_, i) => from + i)
      : undefined;
  }
  if (example !== undefined && !s.enum && !unique) return Array.from({ length: n }, () => structuredClone(example));
  return undefined;
}

/** A value of the string schema `s` exactly `n` characters long, of its format, or undefined when there is none. */
function textOf(s: Schema, n: number): string | undefined {
  if (!typesOf(s).includes('string') || s.pattern || s.enum || s.const !== undefined) return undefined;
  const fill = (before: string, after: string) =>
    n >= before.length + after.length ? before + 'a'.repeat(n - before.length - after.length) + after : undefined;
  switch (s.format) {
    case undefined:
      return 'a'.repeat(n);
    case 'uuid':
      return n === 36 ? '0192f0c4-8f1e-7cc3-9d42-5c1b1f7c2a10' : undefined;
    case 'email':
      return fill('', '@acme.com');
    case 'uri':
      return fill('https://acme.com/', '');
    case 'date':
      return n === 10 ? '2026-11-23' : undefined;
    case 'date-time':
      return n === 20 ? '2026-11-23T10:05:00Z' : n > 21 ? `2026-11-23T10:05:00.${'0'.repeat(n - 21)}Z` : undefined;
    default:
      return undefined;
  }
}

type Path = (string | number)[];

/**
 * One bound of one field: `within` is at the bound, `past` one beyond it. `atMost` bounds (longest strings, largest
 * numbers) are sent together in one request, the others (smallest numbers, longest lists and maps) in another.
 */
interface Bound {
  path: Path;
  atMost: boolean;
  within: unknown;
  past: unknown;
}

/** The bounds of a value of `schema` at `path`, walked with the example's value there (undefined: none). */
function boundsOf(schema: Schema, example: unknown, path: Path): Bound[] {
  const s = resolved(schema);
  const found: Bound[] = [];
  const text = s.maxLength === undefined ? undefined : textOf(s, s.maxLength);
  if (text !== undefined)
    found.push({ path, atMost: true, within: text, past: textOf(s, s.maxLength! + 1) ?? `${text}0` });
  if (isNumber(s)) {
    if (s.maximum !== undefined) found.push({ path, atMost: true, within: s.maximum, past: s.maximum + 1 });
    if (s.minimum !== undefined) found.push({ path, atMost: false, within: s.minimum, past: s.minimum - 1 });
  }
  if (typesOf(s).includes('array') && s.items) {
    const first = Array.isArray(example) ? (example as unknown[])[0] : undefined;
    const values = s.maxItems === undefined ? undefined : itemsFor(s.items, s.maxItems + 1, !!s.uniqueItems, first);
    if (values) found.push({ path, atMost: false, within: values.slice(0, -1), past: values });
    // Into the items through the example's first one; a scalar item needs none.
    const item = resolved(s.items);
    if (first !== undefined || !typesOf(item).includes('object')) found.push(...boundsOf(s.items, first, [...path, 0]));
  }
  if (typesOf(s).includes('object') && (example !== undefined || path.length === 0)) {
    const value = (example ?? {}) as Record<string, unknown>;
    for (const [name, property] of Object.entries(s.properties ?? {})) {
      const inner = resolved(property);
      // An object the example leaves out would have to be made whole here: only its scalar fields are set.
      if (value[name] === undefined && typesOf(inner).includes('object')) continue;
      found.push(...boundsOf(property, value[name], [...path, name]));
    }
    const extra = s.additionalProperties;
    if (typeof extra === 'object') {
      const sample = isPlainString(resolved(extra)) ? 'v' : 1;
      const map = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, sample]));
      if (s.maxProperties !== undefined)
        found.push({ path, atMost: false, within: map(s.maxProperties), past: map(s.maxProperties + 1) });
      found.push(...boundsOf(extra, undefined, [...path, 'k0']));
    }
  }
  return found;
}

/** A copy of `value` with `v` at `path`, making the objects and lists on the way. */
function setAt(value: unknown, path: Path, v: unknown): unknown {
  if (!path.length) return v;
  const [head, ...rest] = path;
  const copy = (
    Array.isArray(value)
      ? [...(value as unknown[])]
      : typeof value === 'object' && value !== null
        ? { ...value }
        : typeof head === 'number'
          ? []
          : {}
  ) as Record<string | number, unknown>;
  copy[head] = setAt(copy[head], rest, v);
  return copy;
}

/** The example with each bound's `within` value (shorter paths first, so a list set whole is then filled in). */
const withinAll = (example: unknown, bounds: Bound[]) =>
  [...bounds].sort((a, b) => a.path.length - b.path.length).reduce((v, b) => setAt(v, b.path, b.within), example);

/** The operation's fullest JSON body example. */
function bodyExample(op: Operation): Record<string, unknown> | undefined {
  const media = op.requestBody?.content?.['application/json'];
  if (!media) return undefined;
  const values = [media.example, ...Object.values(media.examples ?? {}).map((e) => e.value)].filter(
    (v) => v && typeof v === 'object' && !Array.isArray(v),
  );
  return values.sort((a, b) => JSON.stringify(b).length - JSON.stringify(a).length)[0] as Record<string, unknown>;
}

interface Operations {
  operation: string;
  query: Record<string, string>;
  body: Record<string, unknown> | undefined;
  queryBounds: Bound[];
  bodyBounds: Bound[];
  send: (query: Record<string, string>, body: unknown) => Promise<Response>;
}

let t: TestServer;
let apiKey: string;

function operations(): Operations[] {
  const out: Operations[] = [];
  for (const [path, item] of Object.entries(spec.paths)) {
    // Each operation once, under /v2, whose error body names the field.
    if (!path.startsWith('/v2/')) continue;
    for (const [method, op] of Object.entries(item)) {
      const parameters = (op.parameters ?? []).map((p) => deref<Parameter>(p));
      const url = path.replace(/\{(\w+)\}/g, (_, name: string) => {
        const example = parameters.find((q) => q.name === name)?.example;
        return encodeURIComponent(typeof example === 'string' ? example : '0192f0c4-8f1e-7cc3-9d42-5c1b1f7c2a10');
      });
      const query = Object.fromEntries(
        parameters.filter((p) => p.in === 'query' && p.example !== undefined).map((p) => [p.name, String(p.example)]),
      );
      const queryBounds = parameters
        .filter((p) => p.in === 'query' && p.schema)
        .flatMap((p) => boundsOf(p.schema!, p.example, [p.name]))
        // A query parameter is one value: lists and maps are not walked.
        .filter((b) => b.path.length === 1 && !Array.isArray(b.within) && typeof b.within !== 'object');
      const body = bodyExample(op);
      const schema = op.requestBody?.content?.['application/json']?.schema;
      out.push({
        operation: `${method.toUpperCase()} ${path}`,
        query,
        body,
        queryBounds,
        bodyBounds: body && schema ? boundsOf(schema, body, []) : [],
        send: (q, b) =>
          t.fetch(`${url}?${new URLSearchParams(q)}`, {
            method: method.toUpperCase(),
            apiKey,
            ...(b === undefined ? {} : { body: JSON.stringify(b), headers: { 'Content-Type': 'application/json' } }),
          }),
      });
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

const fieldOf = (location: 'query' | 'body', path: Path) => [location, ...path].join('.');

// On both databases: an answer within the bounds may run a read, and the contract holds whatever stores it.
describe('the bounds the spec states', () => {
  it('are the bounds the server enforces, on every bounded query parameter and body field at any depth', async () => {
    const all = operations();
    const fields = all.flatMap((o) => [
      ...o.queryBounds.map((b) => `${o.operation} ${fieldOf('query', b.path)}`),
      ...o.bodyBounds.map((b) => `${o.operation} ${fieldOf('body', b.path)}`),
    ]);
    // Enough of the spec is bounded, at every depth, that a walk that found nothing would show here.
    expect(fields.length).toBeGreaterThan(300);
    expect(fields).toEqual(
      expect.arrayContaining([
        'POST /v2/campaign/sequence-create body.steps',
        'POST /v2/campaign/sequence-create body.steps.0.variants',
        'POST /v2/campaign/sequence-create body.steps.0.variants.0.subject',
        'POST /v2/campaign/sequence-create body.steps.0.variants.0.body',
        'POST /v2/contact/data/set body.customVariables',
        'POST /v2/contact/data/set body.customVariables.k0',
        'POST /v2/contact/move body.contactIds',
        'POST /v2/campaign/create body.options.dailyLimit',
      ]),
    );
    const wrong: string[] = [];
    for (const o of all) {
      // At the bound: the longest and largest together, then the smallest and the most entries together.
      for (const atMost of [true, false]) {
        const query = o.queryBounds.filter((b) => b.atMost === atMost);
        const body = o.bodyBounds.filter((b) => b.atMost === atMost);
        if (!query.length && !body.length) continue;
        const res = await o.send(withinAll(o.query, query) as Record<string, string>, withinAll(o.body, body));
        const answer = (await res.json()) as ErrorBody;
        // Past validation: refused for want of the scope, or a read the key may make.
        if (res.status !== 403 && !res.ok)
          wrong.push(
            `${o.operation}: the ${atMost ? 'largest' : 'smallest'} values answered ${res.status} ${JSON.stringify(answer)}`,
          );
      }
      // One past each bound, one request apiece.
      const past = [
        ...o.queryBounds.map((b) => ({
          field: fieldOf('query', b.path),
          query: setAt(o.query, b.path, String(b.past)),
          body: o.body,
        })),
        ...o.bodyBounds.map((b) => ({
          field: fieldOf('body', b.path),
          query: o.query,
          body: setAt(o.body, b.path, b.past),
        })),
      ];
      await Promise.all(
        past.map(async (c) => {
          const res = await o.send(c.query as Record<string, string>, c.body);
          const answer = (await res.json()) as ErrorBody;
          if (res.status !== 400 || !answer.details?.some((d) => d.field === c.field))
            wrong.push(
              `${o.operation} ${c.field}: one past the bound answered ${res.status} ${JSON.stringify(answer)}`,
            );
        }),
      );
    }
    expect(wrong).toEqual([]);
  }, 900_000);
});
