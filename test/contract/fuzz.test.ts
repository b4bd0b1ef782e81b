/**
 * Property-based tests (fast-check): for every operation of the bundle, requests made invalid on
 * purpose from its schemas (a missing required field, an unknown property, a wrong type, a string
 * over maxLength, a number out of range, too many items, malformed JSON, a bad or missing or
 * unknown parameter) answer a documented 4xx in the version's error format, never a 5xx, and
 * change no stored data (every table but the quota counters is compared before and after).
 */
import fc from 'fast-check';
import type { ReferenceObject, SchemaObject } from 'openapi-typescript';
import type { RawResult } from '../../server/db';
import { startFixture, type Fixture } from './fixture';
import {
  definedAt,
  deref,
  examplesOf,
  operations,
  paramText,
  validateAt,
  validateResponse,
  type Operation,
} from './openapi';

const RUNS_PER_OPERATION = 5;
/** Tables every request changes by design (a rejected request still counts toward the quota). */
const COUNTERS = new Set(['quota_buckets', 'api_keys']);

let f: Fixture;
let tables: string[];
beforeAll(async () => {
  f = await startFixture();
  const rows = await f.t
    .db('information_schema.tables')
    .select<{ table_name: string }[]>('table_name')
    .where({ table_type: 'BASE TABLE' })
    .whereRaw('table_schema = current_schema()');
  tables = rows
    .map((r) => r.table_name)
    .filter((n) => !COUNTERS.has(n) && !n.startsWith('knex_'))
    .sort();
}, 60_000);
afterAll(() => f?.close());

/** Row count and a digest of the content of every table. */
async function snapshot(): Promise<Record<string, string>> {
  const sql = tables
    .map(
      (table) =>
        `select '${table}' as t, count(*)::text || ':' || coalesce(md5(string_agg(x::text, '|' order by x::text)), '') as v from "${table}" x`,
    )
    .join(' union all ');
  const { rows } = await f.t.db.raw<RawResult<{ t: string; v: string }>>(sql);
  return Object.fromEntries(rows.map((row) => [row.t, row.v]));
}

/** A schema (none: `{}`) with $ref followed and allOf parts merged (enough to find properties and bounds). */
function flatten(schema: SchemaObject | ReferenceObject | undefined): Partial<SchemaObject> {
  const s: Partial<SchemaObject> = schema ? deref(schema) : {};
  if (!s.allOf) return s;
  const parts = s.allOf.map((p) => flatten(p));
  return {
    type: 'object',
    properties: Object.fromEntries(parts.flatMap((p) => Object.entries(propertiesOf(p)))),
    required: parts.flatMap((p) => p.required ?? []),
    additionalProperties: parts.some((p) => 'additionalProperties' in p && p.additionalProperties === false)
      ? false
      : undefined,
  };
}

const propertiesOf = (s: Partial<SchemaObject>) => ('properties' in s ? (s.properties ?? {}) : {});

/**
 * A bound of a schema, as written: openapi-typescript types bounds only on the subtypes of their `type` (a type list
 * such as ["string", "number"] has none), and maxLength not at all.
 */
function bound(s: object, keyword: 'maximum' | 'minimum' | 'maxLength' | 'maxItems' | 'minItems'): number | undefined {
  const value: unknown = Reflect.get(s, keyword);
  return typeof value === 'number' ? value : undefined;
}

const typesOf = (s: Partial<SchemaObject>): string[] =>
  Array.isArray(s.type) ? s.type : s.type ? [s.type] : s.const !== undefined ? [typeof s.const] : [];
const SAMPLES: Record<string, unknown> = {
  string: 'zz',
  number: 1.5,
  integer: 7,
  boolean: true,
  object: { z: 1 },
  array: [1],
  null: null,
};

/** Values of JSON types the schema does not allow (none when the schema names no type). */
function wrongTypeValues(s: Partial<SchemaObject>): unknown[] {
  const allowed = typesOf(s);
  if (!allowed.length) return [];
  // An integer is a number too; 1.5 is a wrong type for an integer.
  return Object.entries(SAMPLES)
    .filter(([type]) => !allowed.includes(type) && !(type === 'integer' && allowed.includes('number')))
    .map(([, v]) => v);
}

interface Request {
  path: string;
  query: Record<string, string>;
  body?: unknown;
  /** Raw text sent instead of JSON.stringify(body). */
  raw?: string;
  headers?: Record<string, string>;
}

type Mutation = { name: string; apply: (base: Request) => Request };

function baseRequest(o: Operation): Request | undefined {
  let path = o.path;
  const query: Record<string, string> = {};
  for (const p of (o.op.parameters ?? []).map((x) => deref(x))) {
    const value = examplesOf(p)[0]?.value;
    if (value === undefined) {
      if (p.required) return undefined;
      continue;
    }
    if (p.in === 'path') path = path.replace(`{${p.name}}`, encodeURIComponent(paramText(value)));
    else if (p.in === 'query') query[p.name] = paramText(value);
  }
  const media = o.op.requestBody && deref(o.op.requestBody).content['application/json'];
  if (!media) return { path, query };
  const body = examplesOf(media)[0]?.value;
  return body === undefined ? undefined : { path, query, body };
}

/** The ways to break this operation's request, each certain to be invalid by its schema. */
function mutations(o: Operation): fc.Arbitrary<Mutation>[] {
  const out: fc.Arbitrary<Mutation>[] = [];
  // Every request body of the bundle is an object (its examples, which the base request sends, are valid).
  const withBody = (name: string, edit: (body: Record<string, unknown>) => unknown): Mutation => ({
    name,
    apply: (b) => ({ ...b, body: edit(structuredClone(b.body) as Record<string, unknown>) }),
  });

  out.push(
    fc.stringMatching(/^[a-z]{3,12}$/).map((k) => ({
      name: `unknown query parameter zz${k}`,
      apply: (b) => ({ ...b, query: { ...b.query, [`zz${k}`]: '1' } }),
    })),
  );

  for (const p of (o.op.parameters ?? []).map((x) => deref(x))) {
    const s: Partial<SchemaObject> = p.schema ? deref(p.schema) : {};
    const [maximum, minimum, maxLength] = [bound(s, 'maximum'), bound(s, 'minimum'), bound(s, 'maxLength')];
    if (p.in === 'query' && p.required)
      out.push(
        fc.constant({
          name: `missing ${p.name}`,
          apply: (b) => ({ ...b, query: Object.fromEntries(Object.entries(b.query).filter(([k]) => k !== p.name)) }),
        }),
      );
    const bad: fc.Arbitrary<string>[] = [];
    if (s.type === 'integer' || s.type === 'number') {
      bad.push(fc.stringMatching(/^[a-z]{1,6}$/));
      if (maximum !== undefined) bad.push(fc.integer({ min: 1, max: 1e6 }).map((d) => String(maximum + d)));
      if (minimum !== undefined) bad.push(fc.integer({ min: 1, max: 1e6 }).map((d) => String(minimum - d)));
    }
    if (s.format === 'uuid') bad.push(fc.stringMatching(/^[g-z]{1,30}$/));
    if (s.format === 'email') bad.push(fc.stringMatching(/^[a-z]{1,20}$/));
    if (s.format === 'date') bad.push(fc.constantFrom('2026-13-01', 'yesterday', '2026/11/23'));
    const values: unknown[] | undefined = s.enum;
    if (values) bad.push(fc.stringMatching(/^[A-Z]{2,8}$/).filter((x) => !values.includes(x)));
    if (maxLength !== undefined) bad.push(fc.integer({ min: 1, max: 20 }).map((d) => 'a'.repeat(maxLength + d)));
    for (const arb of bad) {
      out.push(
        arb.map((value) => ({
          name: `${p.in} ${p.name}=${value.slice(0, 40)}`,
          apply: (b) =>
            p.in === 'path'
              ? {
                  ...b,
                  path: o.path
                    .replace(`{${p.name}}`, encodeURIComponent(value))
                    .replace(/\{(\w+)\}/g, (_m, n) =>
                      decodeURIComponent(b.path.split('/')[o.path.split('/').indexOf(`{${n}}`)]),
                    ),
                }
              : p.in === 'header'
                ? { ...b, headers: { ...b.headers, [p.name]: value } }
                : { ...b, query: { ...b.query, [p.name]: value } },
        })),
      );
    }
  }

  const json = o.op.requestBody && deref(o.op.requestBody).content['application/json'];
  const schema = o.op.requestBody ? flatten(json && deref(json).schema) : undefined;
  if (schema) {
    out.push(
      fc
        .constantFrom('{', '{"a":', 'not json', '[1,2', '{"x":1,}')
        .map((raw) => ({ name: `malformed JSON ${raw}`, apply: (b) => ({ ...b, raw }) })),
    );
    out.push(
      fc
        .constantFrom('"text"', '42', '[]', 'null', 'true')
        .map((raw) => ({ name: `body is ${raw}`, apply: (b) => ({ ...b, raw }) })),
    );
    if ('additionalProperties' in schema && schema.additionalProperties === false) {
      out.push(
        fc
          .stringMatching(/^[a-z]{3,12}$/)
          .map((k) => withBody(`unknown property zz${k}`, (body) => ({ ...body, [`zz${k}`]: 1 }))),
      );
    }
    for (const key of schema.required ?? []) {
      out.push(fc.constant(withBody(`missing ${key}`, (body) => (delete body[key], body))));
    }
    for (const [key, raw] of Object.entries(propertiesOf(schema))) {
      const s = flatten(raw);
      const [maximum, minimum, maxLength, maxItems, minItems] = [
        bound(s, 'maximum'),
        bound(s, 'minimum'),
        bound(s, 'maxLength'),
        bound(s, 'maxItems'),
        bound(s, 'minItems'),
      ];
      const wrong = wrongTypeValues(s);
      if (wrong.length)
        out.push(
          fc
            .constantFrom(...wrong)
            .map((v) => withBody(`${key} of the wrong type ${JSON.stringify(v)}`, (body) => ({ ...body, [key]: v }))),
        );
      if (typesOf(s).includes('string') && maxLength !== undefined) {
        out.push(
          fc
            .integer({ min: 1, max: 50 })
            .map((d) =>
              withBody(`${key} over maxLength by ${d}`, (body) => ({ ...body, [key]: 'x'.repeat(maxLength + d) })),
            ),
        );
      }
      if (typesOf(s).some((t) => t === 'integer' || t === 'number')) {
        if (maximum !== undefined)
          out.push(
            fc
              .integer({ min: 1, max: 1e6 })
              .map((d) => withBody(`${key} above maximum`, (body) => ({ ...body, [key]: maximum + d }))),
          );
        if (minimum !== undefined)
          out.push(
            fc
              .integer({ min: 1, max: 1e6 })
              .map((d) => withBody(`${key} below minimum`, (body) => ({ ...body, [key]: minimum - d }))),
          );
      }
      if (typesOf(s).includes('array') && maxItems !== undefined && maxItems <= 2000) {
        out.push(
          fc.constant(
            withBody(`${key} over maxItems`, (body) => {
              const items = body[key];
              return {
                ...body,
                [key]: Array.from({ length: maxItems + 1 }, (_, i): unknown =>
                  Array.isArray(items) && items.length ? items[i % items.length] : i,
                ),
              };
            }),
          ),
        );
      }
      if (typesOf(s).includes('array') && minItems) {
        out.push(fc.constant(withBody(`${key} under minItems`, (body) => ({ ...body, [key]: [] }))));
      }
    }
  }
  return out;
}

async function send(o: Operation, req: Request): Promise<{ status: number; body: unknown; requestId: string | null }> {
  const qs = new URLSearchParams(req.query).toString();
  const hasBody = req.raw !== undefined || req.body !== undefined;
  const res = await f.t.fetch(`${req.path}${qs ? `?${qs}` : ''}`, {
    method: o.method.toUpperCase(),
    apiKey: f.ws.apiKey,
    headers: { ...(hasBody ? { 'content-type': 'application/json' } : {}), ...req.headers },
    body: hasBody ? (req.raw ?? JSON.stringify(req.body)) : undefined,
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* kept as text: the assertions below then fail with the text shown */
  }
  return { status: res.status, body, requestId: res.headers.get('x-request-id') };
}

function requestSchemaPath(o: Operation): string[] {
  const inline = ['paths', o.path, o.method, 'requestBody'];
  return [
    ...(o.op.requestBody ? definedAt(o.op.requestBody, inline) : inline),
    'content',
    'application/json',
    'schema',
  ];
}

const fuzzable = operations.filter((o) => baseRequest(o));

it('can fuzz every operation of the bundle (each has examples to start from)', () => {
  expect(operations.filter((o) => !baseRequest(o)).map((o) => o.key)).toEqual([]);
});

it('derives the mutations from the schemas', () => {
  const names = (key: string) => {
    const o = operations.find((x) => x.key === key)!;
    return fc
      .sample(fc.oneof(...mutations(o)), 300)
      .map((m) => m.name.replace(/(=| zz| by | of the wrong type | JSON | is ).*$/, ''));
  };
  expect(new Set(names('POST /v1/contact/add'))).toEqual(
    new Set([
      'unknown query parameter',
      'malformed',
      'body',
      'unknown property',
      'missing campaignId',
      'missing contacts',
      'campaignId',
      'campaignId over maxLength',
      'contacts',
      'contacts over maxItems',
      'contacts under minItems',
      'header Idempotency-Key',
    ]),
  );
  expect(new Set(names('GET /v1/campaign/list'))).toEqual(
    new Set(['unknown query parameter', 'query limit', 'query skip', 'query status']),
  );
});

describe.each(fuzzable.map((o) => [o.key, o] as const))('%s', (_key, o) => {
  it('answers invalid requests with a documented 4xx in its format and changes nothing', async () => {
    const base = baseRequest(o)!;
    const before = await snapshot();
    await fc.assert(
      fc.asyncProperty(fc.oneof(...mutations(o)), async (mutation) => {
        const req = mutation.apply(base);
        const where = `${o.key} with ${mutation.name}`;
        // The generator itself: a broken body must really break the operation's schema.
        if (req.raw === undefined && req.body !== base.body && validateAt(requestSchemaPath(o), req.body).length === 0)
          throw new Error(`${where}: the mutated body is valid`);
        const answer = await send(o, req);
        if (answer.status < 400 || answer.status >= 500)
          throw new Error(`${where}: answered ${answer.status} ${JSON.stringify(answer.body)}`);
        if (!o.op.responses[String(answer.status)]) throw new Error(`${where}: ${answer.status} is not documented`);
        const problems = validateResponse(o, answer.status, answer.body);
        if (problems.length) throw new Error(`${where}: ${answer.status} body breaks the spec: ${problems.join('; ')}`);
        if (o.path.startsWith('/v2/'))
          expect(answer.body).toMatchObject({ statusCode: answer.status, requestId: answer.requestId });
        else expect(Object.keys(answer.body as object)).toEqual(['error']);
      }),
      { numRuns: RUNS_PER_OPERATION },
    );
    expect(await snapshot()).toEqual(before);
  });
});
