/**
 * The mock server (`npm run mock`: Prism on generated/openapi.json) answers the typed client with
 * the spec's own examples, so a frontend team can build against it before the backend exists.
 * Prism starts on a free loopback port (bounded wait) and is killed afterwards.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { createClient, type ApiClient } from '../../client';
import { deref, examplesOf, isPlaceholder, operations, paramText, type Operation } from './openapi';
import { describeOnEmbeddedDatabase } from '../helpers/binaries';

const PRISM = join(__dirname, '../../node_modules/@stoplight/prism-cli/dist/index.js');
const START_TIMEOUT_MS = 90_000;

describeOnEmbeddedDatabase()('the mock server', () => {
  let prism: ChildProcess;
  let client: ApiClient;
  let baseUrl: string;

  function freePort(): Promise<number> {
    return new Promise((resolve, reject) => {
      const s = createServer();
      s.once('error', reject);
      s.listen(0, '127.0.0.1', () => {
        const { port } = s.address() as { port: number };
        s.close(() => resolve(port));
      });
    });
  }

  beforeAll(async () => {
    const port = await freePort();
    baseUrl = `http://127.0.0.1:${port}`;
    prism = spawn(
      process.execPath,
      [PRISM, 'mock', '--host', '127.0.0.1', '--port', String(port), 'generated/openapi.json'],
      {
        cwd: join(__dirname, '../..'),
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let output = '';
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`Prism did not start within ${START_TIMEOUT_MS} ms:\n${output.slice(-2000)}`)),
        START_TIMEOUT_MS,
      );
      const onData = (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes('Prism is listening')) {
          clearTimeout(timer);
          resolve();
        }
      };
      prism.stdout!.on('data', onData);
      prism.stderr!.on('data', onData);
      prism.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`Prism exited with ${code}:\n${output.slice(-2000)}`));
      });
    });
    prism.removeAllListeners('exit');
    client = createClient({ apiKey: 'lr_mock_key', baseUrl, retry: false });
  }, START_TIMEOUT_MS + 10_000);

  afterAll(async () => {
    if (!prism || prism.exitCode !== null) return;
    const exited = new Promise((resolve) => prism.once('exit', resolve));
    prism.kill('SIGTERM');
    await exited;
  });

  const successStatus = (o: Operation) => Number(Object.keys(o.op.responses).find((s) => s.startsWith('2')));

  /** The first example of the operation's success response, and its media type. */
  function successExample(o: Operation): { type: string; value: unknown } | undefined {
    const content = deref(o.op.responses[String(successStatus(o))]).content ?? {};
    for (const [type, media] of Object.entries(content)) {
      const first = examplesOf(media)[0];
      if (first) return { type, value: first.value };
    }
    return undefined;
  }

  const byId = (id: string) => operations.find((o) => o.operationId === id)!;

  describe('typed calls answer the documented examples', () => {
    it('GET /v1/ratelimit/limits', async () => {
      const { data, response } = await client.GET('/v1/ratelimit/limits');
      expect(response.status).toBe(200);
      expect(data).toEqual(successExample(byId('getRateLimits'))?.value);
      expect(data?.data.limits.perMin).toBe(20);
    });

    it('GET /v2/authenticate', async () => {
      const { data } = await client.GET('/v2/authenticate');
      expect(data).toEqual(successExample(byId('authenticateV2'))?.value);
    });

    it('answers a documented error on request (Prefer: code=404)', async () => {
      const { error, response } = await client.GET('/v1/campaign/get/name', {
        params: { query: { campaignId: '0192f0c4-8f1e-7cc3-9d42-5c1b1f7c2a10' } },
        headers: { Prefer: 'code=404' },
      });
      expect(response.status).toBe(404);
      const notFound = deref(byId('getCampaignName').op.responses['404']).content?.['application/json'];
      expect(examplesOf(notFound).map((e) => e.value)).toContainEqual(error);
    });

    it('a request without the key is refused with 401', async () => {
      const res = await fetch(`${baseUrl}/v1/ratelimit/limits`);
      expect(res.status).toBe(401);
    });
  });

  /** The request an operation's examples describe: path and query parameters and the body. */
  function exampleRequest(o: Operation): { path: string; query: Record<string, string>; body: unknown } | undefined {
    let path = o.path;
    const query: Record<string, string> = {};
    for (const p of (o.op.parameters ?? []).map((x) => deref(x))) {
      const value = examplesOf(p)[0]?.value ?? p.schema?.default;
      if (value === undefined) {
        if (p.required) return undefined;
        continue;
      }
      if (p.in === 'path') path = path.replace(`{${p.name}}`, encodeURIComponent(paramText(value)));
      if (p.in === 'query') query[p.name] = paramText(value);
    }
    const media = o.op.requestBody && deref(o.op.requestBody).content['application/json'];
    const body = examplesOf(media)[0]?.value;
    if (media && body === undefined) return undefined;
    return { path, query, body };
  }

  describe('every operation with examples', () => {
    const documented = operations.filter(
      (o) => !isPlaceholder(o) && successExample(o) !== undefined && exampleRequest(o),
    );

    it('covers the finished operations', () => {
      expect(documented.length).toBeGreaterThanOrEqual(4);
    });

    it.each(documented.map((o) => [o.key, o] as const))('%s answers its first success example', async (_key, o) => {
      const req = exampleRequest(o)!;
      const expected = successExample(o)!;
      const json = /json/.test(expected.type);
      const { data, error, response } = await client.request(
        o.method as 'get',
        req.path as '/v1/ratelimit/limits',
        {
          params: { query: req.query },
          headers: { Accept: expected.type },
          parseAs: json ? 'json' : 'text',
          ...(req.body !== undefined ? { body: req.body } : {}),
        } as never,
      );
      expect({ status: response.status, error }).toEqual({ status: successStatus(o), error: undefined });
      expect(response.headers.get('content-type')).toContain(expected.type);
      expect(data).toEqual(expected.value);
    });
  });
});
