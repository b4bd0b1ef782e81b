/**
 * docs/api-changes.md keeps pace with the spec: its list of operations is the spec's, so an operation added,
 * removed or renamed fails here until the page lists it (and says, in a dated entry, what changed).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readBundledSpec } from '../../server/platform/project-root';

const METHODS = new Set(['get', 'put', 'post', 'delete', 'patch']);

it('lists the operations of the spec, as a dated entry says they changed', () => {
  const spec = readBundledSpec() as unknown as { paths: Record<string, Record<string, { operationId?: string }>> };
  const operations = Object.entries(spec.paths)
    // A /v2 alias of a /v1 path is the same operation.
    .filter(([path]) => !(path.startsWith('/v2/') && spec.paths[`/v1/${path.slice(4)}`]))
    .flatMap(([path, item]) =>
      Object.entries(item)
        .filter(([method]) => METHODS.has(method))
        .map(([method, op]) => `${method.toUpperCase()} ${path}\` \`${op.operationId}`),
    )
    .sort();
  const page = readFileSync(join(__dirname, '../../docs/api-changes.md'), 'utf8');
  const listed = [...page.split('\n## Operations\n')[1].matchAll(/^- `(.+)`$/gm)].map((m) => m[1]).sort();
  expect(listed).toEqual(operations);
});
