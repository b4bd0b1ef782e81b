/**
 * `npm run build:examples` (part of `npm run build`): the browser example page, examples/browser/, bundled by
 * esbuild into dist/examples/ (main.js with the client and openapi-fetch, and index.html), which the server
 * serves at /examples/ when SERVE_EXAMPLES=1.
 */
import { copyFileSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { buildSync } from 'esbuild';

const root = resolve(__dirname, '..');
export const EXAMPLES_OUT = join(root, 'dist', 'examples');

export function buildExamples(): string {
  mkdirSync(EXAMPLES_OUT, { recursive: true });
  buildSync({
    entryPoints: [join(root, 'examples', 'browser', 'main.ts')],
    bundle: true,
    platform: 'browser',
    target: 'es2022',
    format: 'iife',
    minify: true,
    outfile: join(EXAMPLES_OUT, 'main.js'),
    logLevel: 'error',
  });
  copyFileSync(join(root, 'examples', 'browser', 'index.html'), join(EXAMPLES_OUT, 'index.html'));
  return EXAMPLES_OUT;
}

if (require.main === module) buildExamples();
