/**
 * The bundle against the seed and against itself: every seed operation is there with its /v2
 * alias, every example is valid against its own schema, and every operation documents the errors
 * it can always give, in its version's format.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  definedAt,
  deref,
  examplesOf,
  isRef,
  operations,
  responseSchemaPath,
  seedOperations,
  spec,
  validateAt,
} from './openapi';

const seed = seedOperations(readFileSync(join(__dirname, 'seed-operations.txt'), 'utf8'));
const byKey = new Map(operations.map((o) => [o.key, o]));
/** POST operations that change nothing (their inputs are too large for a query). */
const READ_BY_POST = new Set(['getAccountVitals', 'verifyEmails']);

describe('operations', () => {
  it('has all 62 seed operations with their methods and paths', () => {
    expect(seed).toHaveLength(62);
    expect(seed.filter((k) => !byKey.has(k))).toEqual([]);
  });

  it('declares on every operation the scope it needs: a write scope for a change, and 403 documented', () => {
    const pattern = /^(all|[a-z]+:(read|write|spend|manage))$/;
    const problems = operations.flatMap((o) => {
      const scope = (o.op as { 'x-required-scope'?: unknown })['x-required-scope'];
      if (typeof scope !== 'string' || !pattern.test(scope)) return [`${o.key}: x-required-scope ${String(scope)}`];
      if (o.method !== 'get' && scope.endsWith(':read') && !READ_BY_POST.has(o.operationId.replace(/V2$/, '')))
        return [`${o.key}: changes state but needs only ${scope}`];
      return o.op.responses['403'] ? [] : [`${o.key}: no 403`];
    });
    expect(problems).toEqual([]);
  });

  it('serves every /v1 operation again under /v2, operationId + V2', () => {
    const v1 = operations.filter((o) => o.path.startsWith('/v1/'));
    expect(v1.length).toBeGreaterThanOrEqual(31);
    const problems = v1.flatMap((o) => {
      const alias = byKey.get(`${o.method.toUpperCase()} /v2${o.path.slice(3)}`);
      if (!alias) return [`${o.key}: no /v2 alias`];
      return alias.operationId === `${o.operationId}V2`
        ? []
        : [`${alias.key}: operationId ${alias.operationId}, expected ${o.operationId}V2`];
    });
    expect(problems).toEqual([]);
  });

  it('has unique operationIds', () => {
    const ids = operations.map((o) => o.operationId);
    expect(ids.filter((id, i) => ids.indexOf(id) !== i)).toEqual([]);
  });

  it('answers 400, 401 and 429 on every operation', () => {
    const missing = operations.flatMap((o) =>
      ['400', '401', '429'].filter((s) => !o.op.responses[s]).map((s) => `${o.key} ${s}`),
    );
    expect(missing).toEqual([]);
  });

  it('declares the quota headers on every quota-counted error answer (400, 402, 403, 404, 409, 415, 429)', () => {
    const missing = operations.flatMap((o) =>
      ['400', '402', '403', '404', '409', '415', '429']
        .filter((status) => o.op.responses[status])
        .filter((status) => {
          const headers = deref(o.op.responses[status]).headers ?? {};
          return !headers.RateLimit || !headers['RateLimit-Policy'];
        })
        .map((status) => `${o.key} ${status}`),
    );
    expect(missing).toEqual([]);
  });

  it('takes Idempotency-Key on every POST that creates (201) or charges (402), and then answers 409 and 422', () => {
    const takesKey = (o: (typeof operations)[number]) =>
      (o.op.parameters ?? []).some((p) => deref(p).name === 'Idempotency-Key');
    const creatingOrCharging = operations.filter(
      (o) => o.method === 'post' && (o.op.responses['201'] || o.op.responses['402']),
    );
    expect(creatingOrCharging.filter((o) => !takesKey(o)).map((o) => o.key)).toEqual([]);
    const withKey = operations.filter(takesKey);
    expect(withKey.length).toBeGreaterThanOrEqual(29);
    expect(
      withKey.filter((o) => o.method !== 'post' || !o.op.responses['409'] || !o.op.responses['422']).map((o) => o.key),
    ).toEqual([]);
  });

  it('uses the v2 error body on /v2 paths and the v1 body on /v1 paths', () => {
    const problems: string[] = [];
    for (const o of operations) {
      const wanted = o.path.startsWith('/v2/') ? 'ErrorV2' : 'ErrorV1';
      for (const [status, response] of Object.entries(o.op.responses)) {
        if (Number(status) < 400) continue;
        const schema = deref(response).content?.['application/json']?.schema;
        const ref = schema && isRef(schema) ? schema.$ref : undefined;
        if (ref !== `#/components/schemas/${wanted}`)
          problems.push(`${o.key} ${status}: ${ref ?? 'inline schema'}, expected ${wanted}`);
      }
    }
    expect(problems).toEqual([]);
  });
});

describe('examples are valid against their own schemas', () => {
  it('(the validator itself rejects a broken body and a bad format)', () => {
    const limits = operations.find((o) => o.key === 'GET /v1/ratelimit/limits')!;
    const good = {
      status: 'success',
      success: true,
      message: 'Rate limits retrieved',
      data: { limits: { perMin: 20, perHour: 50, perDay: 100, perSecond: null } },
    };
    expect(validateAt(responseSchemaPath(limits, '200'), good)).toEqual([]);
    expect(validateAt(responseSchemaPath(limits, '200'), { ...good, data: { limits: { perMin: '20' } } })).not.toEqual(
      [],
    );
    const v2 = {
      error: 'x',
      code: 'not_found',
      statusCode: 404,
      requestId: 'r',
      details: [{ field: 'a', location: 'nowhere', message: 'm', code: 'c' }],
    };
    expect(validateAt(['components', 'schemas', 'ErrorV2'], v2)).not.toEqual([]);
  });

  it('request bodies, parameters and responses of every operation', () => {
    const problems: string[] = [];
    let checked = 0;
    const check = (where: string, segments: string[], value: unknown) => {
      checked += 1;
      const errors = validateAt(segments, value);
      if (errors.length) problems.push(`${where}: ${errors.join('; ')}`);
    };
    for (const o of operations) {
      const base = ['paths', o.path, o.method];
      const { requestBody } = o.op;
      if (requestBody) {
        const at = definedAt(requestBody, [...base, 'requestBody']);
        for (const [type, media] of Object.entries(deref(requestBody).content)) {
          for (const ex of examplesOf(media))
            check(`${o.key} request ${type} example ${ex.name}`, [...at, 'content', type, 'schema'], ex.value);
        }
      }
      (o.op.parameters ?? []).forEach((p, i) => {
        const param = deref(p);
        const at = definedAt(p, [...base, 'parameters', String(i)]);
        for (const ex of examplesOf(param))
          check(`${o.key} parameter ${param.name} example ${ex.name}`, [...at, 'schema'], ex.value);
      });
      for (const status of Object.keys(o.op.responses)) {
        const content = deref(o.op.responses[status]).content ?? {};
        for (const [type, media] of Object.entries(content)) {
          for (const ex of examplesOf(media))
            check(`${o.key} ${status} ${type} example ${ex.name}`, responseSchemaPath(o, status, type), ex.value);
        }
      }
    }
    expect(problems).toEqual([]);
    expect(checked).toBeGreaterThan(200);
  });

  it('schema-level `examples` everywhere in the bundle', () => {
    const problems: string[] = [];
    const walk = (node: unknown, segments: string[]) => {
      if (Array.isArray(node)) return node.forEach((v, i) => walk(v, [...segments, String(i)]));
      if (typeof node !== 'object' || node === null) return;
      const examples = 'examples' in node ? node.examples : undefined;
      const isSchema = segments.includes('schema') || segments.includes('schemas');
      if (isSchema && Array.isArray(examples)) {
        examples.forEach((ex: unknown, i) => {
          const errors = validateAt(segments, ex);
          if (errors.length) problems.push(`${segments.join('/')} examples[${i}]: ${errors.join('; ')}`);
        });
      }
      for (const [k, v] of Object.entries(node)) if (!(k === 'examples' && Array.isArray(v))) walk(v, [...segments, k]);
    };
    walk(spec.paths, ['paths']);
    walk(spec.components, ['components']);
    expect(problems).toEqual([]);
  });
});

describe('the bundle', () => {
  it('names the three environments as servers', () => {
    expect((spec.servers ?? []).map((s) => s.description).sort()).toEqual(['local', 'production', 'staging']);
  });

  it('puts the X-API-Key scheme on every operation', () => {
    expect(spec.security).toEqual([{ ApiKeyAuth: [] }]);
    expect(spec.components?.securitySchemes?.ApiKeyAuth).toMatchObject({
      type: 'apiKey',
      in: 'header',
      name: 'X-API-Key',
    });
    expect(
      operations.filter((o) => o.op.security && !o.op.security.some((s) => 'ApiKeyAuth' in s)).map((o) => o.key),
    ).toEqual([]);
  });
});
