/**
 * `npm run build:client`: the client as a package another project installs, in dist/client-package/
 * (`npm install <path>/dist/client-package`, or `npm pack` it):
 *
 *   package.json               name, version, entry point and types; depends on openapi-fetch only
 *   client/index.js, *.d.ts    compiled from client/
 *   generated/api.d.ts         the spec's types
 *   generated/openapi.json     only the spec's `servers` (all the client reads of the bundle)
 *   generated/idempotent-operations.json   the operations that get an Idempotency-Key
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const root = resolve(__dirname, '..');
export const PACKAGE_DIR = join(root, 'dist', 'client-package');
export const PACKAGE_NAME = '@leadreach/api-client';

export function buildClientPackage(): string {
  rmSync(PACKAGE_DIR, { recursive: true, force: true });
  execFileSync(join(root, 'node_modules', '.bin', 'tsc'), ['-p', 'client/tsconfig.json'], {
    cwd: root,
    stdio: 'inherit',
  });
  // Our own files: the bundle that npm run generate writes, and the project's package.json.
  const spec = JSON.parse(readFileSync(join(root, 'generated', 'openapi.json'), 'utf8')) as {
    servers: unknown;
    info: { title: string; version: string };
  };
  const rootPackage = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    license: string;
    engines: Record<string, string>;
    dependencies: Record<string, string>;
  };
  copyFileSync(join(root, 'generated', 'api.d.ts'), join(PACKAGE_DIR, 'generated', 'api.d.ts'));
  writeFileSync(
    join(PACKAGE_DIR, 'generated', 'openapi.json'),
    JSON.stringify({ servers: spec.servers }, null, 2) + '\n',
  );
  const manifest = {
    name: PACKAGE_NAME,
    version: spec.info.version,
    description: `Typed client of the ${spec.info.title}`,
    license: rootPackage.license,
    main: './client/index.js',
    types: './client/index.d.ts',
    exports: {
      '.': { types: './client/index.d.ts', default: './client/index.js' },
      './package.json': './package.json',
    },
    files: ['client', 'generated'],
    engines: rootPackage.engines,
    dependencies: {
      'openapi-fetch': rootPackage.dependencies['openapi-fetch'],
      standardwebhooks: rootPackage.dependencies.standardwebhooks,
    },
  };
  writeFileSync(join(PACKAGE_DIR, 'package.json'), JSON.stringify(manifest, null, 2) + '\n');
  return PACKAGE_DIR;
}

if (require.main === module) {
  try {
    console.log(`client package: ${buildClientPackage()}`);
  } catch (err) {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  }
}
