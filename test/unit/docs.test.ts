/**
 * What the README and the pages under docs/ state that can drift from the code: counts of operations, the
 * idempotent operations, the worker's jobs, the settings, and `.env.example`. Each is read from its source here.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { ENV_EXAMPLE, TABLE, envExample, settingsOf } from '../../scripts/env-example';
import { docsSpec } from '../../scripts/docs';
import type { BundledSpec } from '../../server/platform/project-root';

const ROOT = join(__dirname, '../..');
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');
const README = read('README.md');
const DOCS = readdirSync(join(ROOT, 'docs')).map((f) => `docs/${f}`);

const spec = JSON.parse(read('generated/openapi.json')) as { paths: Record<string, Record<string, unknown>> };
const METHODS = new Set(['get', 'put', 'post', 'delete', 'patch']);
const pairs = Object.entries(spec.paths).flatMap(([path, item]) =>
  Object.keys(item)
    .filter((m) => METHODS.has(m))
    .map((m) => ({ path, method: m })),
);

/** The number a text states right before `words`, e.g. figure(README, 'operations, each written once'). */
function figure(text: string, words: string): number {
  const match = new RegExp(`(\\d+) ${words.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`).exec(text);
  if (!match) throw new Error(`no "<n> ${words}" in the text`);
  return Number(match[1]);
}

it("states the spec's operation counts", () => {
  const v1 = pairs.filter((p) => p.path.startsWith('/v1/')).length;
  const v2Only = pairs.filter(
    (p) => p.path.startsWith('/v2/') && !spec.paths[p.path.replace(/^\/v2\//, '/v1/')],
  ).length;
  expect(figure(README, 'path and method pairs')).toBe(pairs.length);
  expect(figure(README, 'under `/v1`')).toBe(v1);
  expect(figure(README, 'under `/v2` only')).toBe(v2Only);
  expect(figure(README, 'operations, each written once')).toBe(v1 + v2Only);
});

it('states how many operations take an Idempotency-Key', () => {
  const idempotent = (JSON.parse(read('generated/idempotent-operations.json')) as unknown[]).length;
  expect(figure(README, 'operations, `/v2` aliases')).toBe(idempotent);
  expect(figure(read('docs/guarantees.md'), 'operations, `/v2` aliases')).toBe(idempotent);
});

it("lists the worker's jobs as server/boot.ts maps them to roles", () => {
  // The jobs of every role, as jobsOfRoles maps them (`sending: { sending: services.sending }`).
  const byRole = /const byRole[^=]*= \{([\s\S]*?)\n {2}\};/.exec(read('server/boot.ts'))![1];
  const jobs = [...byRole.matchAll(/(\w+): services\./g)].map((m) => m[1]);
  const listed = /inside `npm start` \(or apart: `npm run worker`\): ([\w,\s]+) \((\d+) jobs/.exec(README)!;
  expect(listed[1].split(',').map((j) => j.trim())).toEqual(jobs);
  expect(Number(listed[2])).toBe(jobs.length);
});

it('documents every setting server/platform/config.ts reads, and .env.example is made from that table', () => {
  const source = read('server/platform/config.ts');
  const read_ = new Set([...source.matchAll(/(?:env\.|\(')([A-Z][A-Z0-9_]{2,})\b/g)].map((m) => m[1]));
  for (const old of ['SENDING_ENABLED', 'SENDING_TICK_SECONDS']) read_.delete(old); // old names, still read
  const documented = settingsOf(readFileSync(TABLE, 'utf8')).map((s) => s.name);
  // A prefix the code expands (`OAUTH_GOOGLE` for `OAUTH_GOOGLE_CLIENT_ID` and its secret) is documented by its settings.
  const undocumented = [...read_].filter(
    (name) => !documented.includes(name) && !documented.some((d) => d.startsWith(`${name}_`)),
  );
  expect(undocumented).toEqual([]);
  expect(readFileSync(ENV_EXAMPLE, 'utf8')).toBe(envExample(settingsOf(readFileSync(TABLE, 'utf8'))));
});

it('keeps the README short, with its contents, linking the pages under docs/', () => {
  expect(README.split('\n').length).toBeLessThanOrEqual(400);
  expect(README).toContain('## Contents');
  for (const page of DOCS) expect(README).toContain(`](${page})`);
});

it('never speaks of its own history', () => {
  const history =
    /\bissues? #?\d+|\bthis session|\bsessions?'s? (main|run|work)|\bround (one|two|three|four|five)\b|\bmain at [0-9a-f]{7}|\bcommit [0-9a-f]{7}/i;
  for (const file of ['README.md', 'CHANGELOG.md', 'scripts/README.md', ...DOCS]) {
    const found = read(file)
      .split('\n')
      .map((line, i) => `${file}:${i + 1}: ${line}`)
      .filter((line) => history.test(line));
    expect(found).toEqual([]);
  }
});

it('the docs portal lists each operation once, naming its /v2 alias', () => {
  const shown = docsSpec(spec as unknown as BundledSpec).paths as Record<
    string,
    Record<string, { summary?: string; description?: string; tags?: string[] }>
  >;
  const operations = Object.entries(shown).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([m]) => METHODS.has(m))
      .map(([m, op]) => ({ path, method: m, ...op })),
  );
  const titles = operations.map((op) => `${op.tags?.[0]}: ${op.summary}`);
  expect(titles.filter((title, i) => titles.indexOf(title) !== i)).toEqual([]);
  for (const { path, method } of pairs.filter(
    (p) => p.path.startsWith('/v2/') && spec.paths[`/v1${p.path.slice(3)}`],
  )) {
    const v1 = operations.find((op) => op.path === `/v1${path.slice(3)}` && op.method === method)!;
    expect(v1.description).toContain(`\`${method.toUpperCase()} ${path}\``);
  }
  expect(operations).toHaveLength(
    pairs.length - pairs.filter((p) => p.path.startsWith('/v2/') && spec.paths[`/v1${p.path.slice(3)}`]).length,
  );
});
