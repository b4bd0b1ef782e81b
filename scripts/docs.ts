/**
 * `npm run docs`: the static documentation portal, dist/docs/index.html, built from the bundle
 * (generated/openapi.json) with Redocly's build-docs. The server serves it at /docs.
 *
 * The page must work offline: Redoc's script is inlined (--inlineBundle, not the CDN), and the
 * build fails if the page still loads anything from another host. Redoc's script itself fetches its
 * "API docs by Redocly" logo from cdn.redoc.ly at run time; that image is replaced by an inline SVG
 * of the same words. The guides are the `##` sections
 * of info.description, which Redoc lists in its sidebar before the operations. Each `/v1` operation is listed
 * once, its `/v2` alias named in its description, so no two sidebar entries share a title.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { readBundledSpec, type BundledSpec } from '../server/platform/project-root';

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;
type Operation = { operationId?: string; description?: string; 'x-badges'?: { name: string }[] };

/**
 * The bundle as the portal shows it: the `/v2` alias of a `/v1` path (same behaviour, the v2 error body) is not a
 * second entry; the `/v1` operation names it at the top of its description and in a badge beside its title.
 */
export function docsSpec(spec: BundledSpec): BundledSpec {
  const copy = structuredClone(spec);
  const paths = copy.paths as Record<string, Partial<Record<(typeof METHODS)[number], Operation>>>;
  for (const path of Object.keys(paths)) {
    if (!path.startsWith('/v1/')) continue;
    const alias = `/v2${path.slice(3)}`;
    const aliased = paths[alias];
    if (!aliased) continue;
    for (const method of METHODS) {
      const op = paths[path][method];
      if (!op) continue;
      const also = `${method.toUpperCase()} ${alias}`;
      op.description = `Also served as \`${also}\` (\`${aliased[method]?.operationId}\`): the same operation with the v2 error body.\n\n${op.description ?? ''}`;
      op['x-badges'] = [...(op['x-badges'] ?? []), { name: `also ${alias}` }];
    }
    delete paths[alias];
  }
  copy.info.description = `${copy.info.description ?? ''}\n\n${apiChanges()}`;
  return copy;
}

/** docs/api-changes.md as the portal's last guide: its title a guide's `##`, its dated entries below it. */
function apiChanges(): string {
  const page = readFileSync(join(root, 'docs', 'api-changes.md'), 'utf8');
  return page.replace(/^## /gm, '### ').replace(/^# /m, '## ');
}

const root = resolve(__dirname, '..');
export const DOCS_FILE = join(root, 'dist', 'docs', 'index.html');

/** `src`/`href` attributes (and CSS `url()`/`@import`) that load from another host. */
export function externalResources(html: string): string[] {
  const found = new Set<string>();
  for (const m of html.matchAll(
    /<(?:script|link|img|iframe)\b[^>]*\b(?:src|href)\s*=\s*["']?((?:https?:)?\/\/[^"' >]+)/gi,
  )) {
    // A plain hyperlink (<a href>) is navigation, not a resource; <link rel=...> is a resource.
    found.add(m[1]);
  }
  for (const m of html.matchAll(/(?:@import\s+|url\(\s*)["']?((?:https?:)?\/\/[^"')\s]+)/gi)) found.add(m[1]);
  return [...found];
}

const ATTRIBUTION_LOGOS = ['https://cdn.redoc.ly/redoc/logo-mini-full.svg', 'https://cdn.redoc.ly/redoc/logo-mini.svg'];
const INLINE_LOGO =
  'data:image/svg+xml,' +
  encodeURIComponent(
    '<svg xmlns="http://www.w3.org/2000/svg" width="64" height="16"><text x="0" y="12" font-family="sans-serif" font-size="12" fill="#0044d4">Redocly</text></svg>',
  );

export function buildDocs(): string {
  mkdirSync(join(root, 'dist', 'docs'), { recursive: true });
  const work = mkdtempSync(join(tmpdir(), 'docs-'));
  const input = join(work, 'openapi.json');
  writeFileSync(input, JSON.stringify(docsSpec(readBundledSpec())));
  try {
    execFileSync(
      join(root, 'node_modules', '.bin', 'redocly'),
      ['build-docs', input, '--inlineBundle', '--title', readBundledSpec().info.title, '-o', DOCS_FILE],
      // Telemetry off: the CLI would report the build, and the page would send traces to Redocly. Its notices
      // (boxed Node 20 and Redoc 3 banners, progress) go to stderr, which has no quiet option: it is kept and
      // shown only when the build fails, so `npm start` prints nothing of it before the API key.
      {
        cwd: root,
        stdio: ['ignore', 'ignore', 'pipe'],
        encoding: 'utf8',
        env: { ...process.env, REDOCLY_TELEMETRY: 'off' },
      },
    );
  } catch (err) {
    const output = (err as { stderr?: string }).stderr;
    throw new Error(`redocly build-docs failed${output ? `:\n${output}` : ''}`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  let html = readFileSync(DOCS_FILE, 'utf8');
  for (const logo of ATTRIBUTION_LOGOS) html = html.replaceAll(logo, INLINE_LOGO);
  writeFileSync(DOCS_FILE, html);
  if (!html.includes('"disableTelemetry":true')) throw new Error(`${DOCS_FILE}: Redoc telemetry is not disabled`);
  const external = [...externalResources(html), ...ATTRIBUTION_LOGOS.filter((logo) => html.includes(logo))];
  if (external.length)
    throw new Error(
      `${DOCS_FILE} loads resources from other hosts, so it would not work offline: ${external.join(', ')}`,
    );
  return DOCS_FILE;
}

if (require.main === module) {
  try {
    console.log(`documentation portal: ${buildDocs()}`);
  } catch (err) {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  }
}
