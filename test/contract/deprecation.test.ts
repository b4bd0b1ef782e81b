/**
 * Deprecation announced: no operation of the spec is deprecated yet, so the app is started with a copy of the
 * bundle in which one operation (and its /v2 alias), one query parameter and one body property are marked as
 * the spec would mark them, their success answers given the headers as the generate step gives them. Through
 * HTTP: the deprecated operation answers `Deprecation`, `Sunset` and `Link` (each as its header schema in the
 * bundle says), a deprecated field only when the request sends it, an undeprecated operation none, and a browser
 * may read them (CORS). The Spectral rule of `npm run lint:spec` refuses a deprecated operation or field without
 * its dates and successor.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { declareDeprecationHeaders, deprecations } from '../../server/platform/deprecation';
import { readBundledSpec, type BundledSpec } from '../../server/platform/project-root';
import { describeOnEmbeddedDatabase } from '../helpers/binaries';
import { startTestServer, type TestServer, type TestWorkspace } from '../helpers/server';
import { validateAt } from './openapi';

const ORIGIN = 'https://app.acme.test';
const DEPRECATED_AT = '2026-12-05';
const SUNSET = '2027-06-30';

type Node = Record<string, unknown>;

/** The bundle with `GET /v1/campaign/get/name` (both versions), `skip` of the suppression list and `options` of campaign create deprecated. */
function markedSpec(): BundledSpec {
  const spec = structuredClone(readBundledSpec());
  const op = (path: string, method: string) => (spec.paths[path] as Node)[method] as Node;
  for (const path of ['/v1/campaign/get/name', '/v2/campaign/get/name'])
    Object.assign(op(path, 'get'), {
      deprecated: true,
      'x-deprecated-at': DEPRECATED_AT,
      'x-sunset': SUNSET,
      'x-successor': 'getCampaign',
    });
  const list = op('/v2/suppression/list', 'get');
  const skip = (list.parameters as Node[]).find((p) => p.name === 'skip')!;
  Object.assign(skip, { deprecated: true, 'x-deprecated-at': DEPRECATED_AT });
  const body = (op('/v2/campaign/create', 'post').requestBody as { content: Record<string, { schema: Node }> }).content[
    'application/json'
  ].schema;
  Object.assign((body.properties as Record<string, Node>).options, {
    deprecated: true,
    'x-deprecated-at': DEPRECATED_AT,
  });
  for (const d of deprecations(spec)) declareDeprecationHeaders(op(d.path, d.method));
  return spec;
}

const HEADERS = ['Deprecation', 'Sunset', 'Link'] as const;
const announced = (res: Response) => Object.fromEntries(HEADERS.map((h) => [h, res.headers.get(h)]));

describeOnEmbeddedDatabase()('deprecation announced', () => {
  const spec = markedSpec();
  let t: TestServer;
  let ws: TestWorkspace;
  let campaignId: string;

  beforeAll(async () => {
    t = await startTestServer({ app: { spec }, config: { corsOrigins: [ORIGIN] } });
    ws = await t.createWorkspace();
    const created = await ws.client.POST('/v2/campaign/create', { body: { name: 'Deprecations' } });
    campaignId = created.data!.data.campaign.id;
  });
  afterAll(() => t?.close());

  it('a deprecated operation answers Deprecation, Sunset and Link, under both versions', async () => {
    const expected = {
      Deprecation: `@${Date.parse(DEPRECATED_AT) / 1000}`,
      Sunset: 'Wed, 30 Jun 2027 00:00:00 GMT',
      Link: '</v2/campaign/get>; rel="successor-version", </docs/#/section/api-changes>; rel="deprecation"; type="text/html"',
    };
    for (const version of ['v1', 'v2']) {
      const res = await t.fetch(`/${version}/campaign/get/name?campaignId=${campaignId}`, {
        apiKey: ws.apiKey,
        headers: { Origin: ORIGIN },
      });
      expect([version, res.status, announced(res)]).toEqual([version, 200, expected]);
      // A browser page may read them.
      const exposed = res.headers.get('access-control-expose-headers')?.split(',') ?? [];
      expect(exposed).toEqual(expect.arrayContaining([...HEADERS]));
      // A refused request learns it too.
      const refused = await t.fetch(`/${version}/campaign/get/name?campaignId=nope`, { apiKey: ws.apiKey });
      expect([refused.status, refused.headers.get('Deprecation')]).toEqual([400, expected.Deprecation]);
    }
    // The contract states them: the success answer declares each header, and each value is what it declares.
    const declared = (spec.paths['/v1/campaign/get/name'] as Node).get as { responses: Record<string, Node> };
    expect(Object.keys(declared.responses['200'].headers as Node)).toEqual(expect.arrayContaining([...HEADERS]));
    for (const [name, value] of Object.entries(expected))
      expect([name, validateAt(['components', 'headers', name, 'schema'], value)]).toEqual([name, []]);
  });

  it('an operation that is not deprecated answers none of them', async () => {
    const res = await t.fetch(`/v1/campaign/get/status?campaignId=${campaignId}`, { apiKey: ws.apiKey });
    expect([res.status, announced(res)]).toEqual([200, { Deprecation: null, Sunset: null, Link: null }]);
  });

  it('a deprecated query parameter or body field is announced when the request sends it', async () => {
    const deprecation = `@${Date.parse(DEPRECATED_AT) / 1000}`;
    const docsOnly = '</docs/#/section/api-changes>; rel="deprecation"; type="text/html"';
    const withSkip = await t.fetch('/v2/suppression/list?skip=0', { apiKey: ws.apiKey });
    expect([withSkip.status, announced(withSkip)]).toEqual([
      200,
      { Deprecation: deprecation, Sunset: null, Link: docsOnly },
    ]);
    const without = await t.fetch('/v2/suppression/list', { apiKey: ws.apiKey });
    expect(without.headers.get('Deprecation')).toBeNull();

    const withOptions = await ws.client.POST('/v2/campaign/create', {
      body: { name: 'With options', options: { dailyLimit: 10 } },
    });
    expect([withOptions.response.status, withOptions.response.headers.get('Deprecation')]).toEqual([201, deprecation]);
    const plain = await ws.client.POST('/v2/campaign/create', { body: { name: 'Without options' } });
    expect([plain.response.status, plain.response.headers.get('Deprecation')]).toEqual([201, null]);
  });

  it('a successor the spec does not have stops the start', () => {
    const broken = structuredClone(spec);
    ((broken.paths['/v1/campaign/get/name'] as Node).get as Node)['x-successor'] = 'noSuchOperation';
    expect(() => deprecations(broken)).toThrow(
      'GET /v1/campaign/get/name: x-successor "noSuchOperation" is no path or operationId of the spec',
    );
  });

  it('npm run lint:spec refuses a deprecated operation or field without its extensions', () => {
    const dir = mkdtempSync(join(tmpdir(), 'deprecation-lint-'));
    try {
      const file = join(dir, 'openapi.json');
      const unannounced = structuredClone(spec);
      const op = (unannounced.paths['/v1/campaign/get/name'] as Node).get as Node;
      delete op['x-successor'];
      op['x-sunset'] = 'soon';
      const parameters = ((unannounced.paths['/v2/suppression/list'] as Node).get as { parameters: Node[] }).parameters;
      const skip = parameters.findIndex((p) => p.name === 'skip');
      delete parameters[skip]['x-deprecated-at'];
      writeFileSync(file, JSON.stringify(unannounced));
      let output = '';
      try {
        execFileSync(
          join(__dirname, '../../node_modules/.bin/spectral'),
          [
            'lint',
            file,
            '--ruleset',
            join(__dirname, '../../.spectral.yaml'),
            '-f',
            'json',
            '--fail-severity',
            'error',
          ],
          { encoding: 'utf8', stdio: 'pipe' },
        );
      } catch (err) {
        output = (err as { stdout: string }).stdout;
      }
      const found = (JSON.parse(output) as { code: string; path: string[] }[])
        .filter((r) => r.code.startsWith('deprecated-'))
        .map((r) => `${r.code} ${r.path.join('.')}`);
      expect(found.sort()).toEqual([
        `deprecated-field-announced paths./v2/suppression/list.get.parameters.${skip}`,
        'deprecated-operation-announced paths./v1/campaign/get/name.get',
        'deprecated-operation-announced paths./v1/campaign/get/name.get.x-sunset',
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
