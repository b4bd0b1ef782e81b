import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { OpenAPIV3 } from 'express-openapi-validator/dist/framework/types';

/** The folder holding package.json, from the sources (server/) and from the build (dist/server/) alike. */
function findRoot(from: string): string {
  let dir = from;
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`no package.json above ${from}`);
    dir = parent;
  }
  return dir;
}

export const PROJECT_ROOT = findRoot(__dirname);
export const BUNDLED_SPEC = join(PROJECT_ROOT, 'generated', 'openapi.json');
export const DOCS_DIR = join(PROJECT_ROOT, 'dist', 'docs');
export const EXAMPLES_DIR = join(PROJECT_ROOT, 'dist', 'examples');
export const APP_DIR = join(PROJECT_ROOT, 'dist', 'app');

/** The bundled spec, as `npm run generate` writes it from spec/ (our own OpenAPI 3.1 document, checked in CI). */
export type BundledSpec = OpenAPIV3.DocumentV3_1 & { paths: OpenAPIV3.PathsObject };
export const readBundledSpec = (): BundledSpec => JSON.parse(readFileSync(BUNDLED_SPEC, 'utf8')) as BundledSpec;
