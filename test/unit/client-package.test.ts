/**
 * The client as another project uses it: `npm run build:client` makes dist/client-package, which is
 * copied into a scratch project's node_modules (with only its dependencies, openapi-fetch and standardwebhooks, beside it).
 * A TypeScript consumer type-checks against the package's own types, a plain Node consumer calls
 * the real server, and `npm run example` runs against it too.
 */
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { buildClientPackage, PACKAGE_NAME } from '../../client/build';
import spec from '../../generated/openapi.json';
import { generateLeads } from '../../server/modules/leads/generate';
import { startTestServer, type TestServer } from '../helpers/server';
import { describeOnEmbeddedDatabase } from '../helpers/binaries';

const run = promisify(execFile);
const root = resolve(__dirname, '../..');
describeOnEmbeddedDatabase()('the client as a package', () => {
  let t: TestServer;
  let project: string;

  beforeAll(async () => {
    t = await startTestServer();
    const dir = buildClientPackage();
    project = mkdtempSync(join(tmpdir(), 'client-consumer-'));
    const modules = join(project, 'node_modules');
    for (const scope of ['@leadreach', '@stablelib']) mkdirSync(join(modules, scope), { recursive: true });
    cpSync(dir, join(modules, PACKAGE_NAME), { recursive: true });
    for (const dep of [
      'openapi-fetch',
      'openapi-typescript-helpers',
      'standardwebhooks',
      '@stablelib/base64',
      'fast-sha256',
    ])
      symlinkSync(join(root, 'node_modules', dep), join(modules, dep), 'dir');
  }, 120_000);

  afterAll(async () => {
    await t?.close();
    if (project) rmSync(project, { recursive: true, force: true });
  });

  it('type-checks a consumer against the package types, and rejects a wrong call', async () => {
    writeFileSync(
      join(project, 'consumer.ts'),
      `import { createClient, unwrap, ENVIRONMENTS, type components } from '${PACKAGE_NAME}';
const api = createClient({ apiKey: 'k', environment: 'production', retry: { maxAttempts: 3 } });
export async function limits(): Promise<components['schemas']['QuotaLimits']> {
  return unwrap(await api.GET('/v1/ratelimit/limits')).data.limits;
}
export async function wrong() {
  // @ts-expect-error: no such path
  await api.GET('/v1/ratelimit/limitz');
  // @ts-expect-error: company search needs dataOptions basic or full
  await api.POST('/v1/company/find', { body: { dataOptions: ['cheap'], page: 1, perPage: 5 } });
}
export const production: string = ENVIRONMENTS.production;
`,
    );
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          noEmit: true,
          module: 'commonjs',
          moduleResolution: 'node10',
          target: 'ES2022',
          lib: ['ES2023', 'DOM'],
          types: [],
        },
        files: ['consumer.ts'],
      }),
    );
    await expect(
      run(join(root, 'node_modules/.bin/tsc'), ['-p', 'tsconfig.json'], { cwd: project }),
    ).resolves.toBeDefined();
  }, 120_000);

  it('calls the real server from a plain Node project', async () => {
    const ws = await t.createWorkspace({ name: 'Package user' });
    writeFileSync(
      join(project, 'call.js'),
      `const { createClient, ENVIRONMENTS } = require('${PACKAGE_NAME}');
createClient({ apiKey: process.env.API_KEY, baseUrl: process.env.BASE_URL }).GET('/v1/authenticate')
  .then(({ data }) => console.log(JSON.stringify({ name: data.data.workspace.name, environments: ENVIRONMENTS })));
`,
    );
    const { stdout } = await run(process.execPath, ['call.js'], {
      cwd: project,
      env: { ...process.env, API_KEY: ws.apiKey, BASE_URL: t.url },
    });
    expect(JSON.parse(stdout)).toEqual({
      name: 'Package user',
      environments: Object.fromEntries(spec.servers.map((s) => [s.description, s.url])),
    });
  }, 60_000);

  it('runs the example script (npm run example) against the server', async () => {
    await generateLeads(t.db, { people: 60, companies: 10, seed: 3, now: t.clock.now() });
    const ws = await t.createWorkspace({ name: 'Example' });
    const { stdout } = await run(join(root, 'node_modules/.bin/tsx'), ['client/example.ts'], {
      cwd: root,
      env: { ...process.env, API_KEY: ws.apiKey, BASE_URL: t.url },
    });
    expect(stdout).toContain('Authenticated: workspace "Example"');
    expect(stdout).toContain('Quota: 100000/minute, 100000/hour, 100000/day');
    expect(stdout).toMatch(/People search: \d+ matches, page 1 of \d+/);
    expect(stdout).toMatch(/Credits: \d+ used, \d+ remaining/);

    const failed = await run(join(root, 'node_modules/.bin/tsx'), ['client/example.ts'], {
      cwd: root,
      env: { ...process.env, API_KEY: 'lr_wrong', BASE_URL: t.url },
    }).catch((e: { stderr: string; code: number }) => e);
    expect(failed).toMatchObject({ code: 1 });
    expect((failed as { stderr: string }).stderr).toMatch(
      /API error 401: Invalid API key\. \(request id [0-9a-f-]{36}\)/,
    );
  }, 60_000);
});
