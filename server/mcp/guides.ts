/**
 * The guides an agent may read as MCP resources: the spec's own guide (its `info.description`: authentication,
 * quotas, errors, paging, credits, idempotency, versions) and the docs/ pages that describe the API's behaviour.
 * The operator's pages (configuration, production, benchmarks, ...) are not the agent's business.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Resource } from '@modelcontextprotocol/sdk/types.js';
import { PROJECT_ROOT } from '../platform/project-root';

const API_GUIDES = [
  'keys',
  'usage',
  'guarantees',
  'sequences',
  'oauth',
  'tracking-domains',
  'reliability',
  'input-and-privacy',
  'client',
  'mcp',
];

export interface Guide extends Resource {
  text: string;
}

const GUIDES_DIR = join(PROJECT_ROOT, 'docs');

export function readGuides(specDescription: string): Guide[] {
  const overview: Guide = {
    uri: 'guide://api',
    name: 'api',
    title: 'The API guide: authentication, quotas, errors, paging, credits, idempotency, versions',
    mimeType: 'text/markdown',
    text: specDescription,
  };
  const pages = API_GUIDES.map((name) => join(GUIDES_DIR, `${name}.md`))
    .filter((file) => existsSync(file))
    .map((file): Guide => {
      const text = readFileSync(file, 'utf8');
      const name = file.slice(GUIDES_DIR.length + 1, -'.md'.length);
      return {
        uri: `guide://${name}`,
        name,
        title: /^# (.+)$/m.exec(text)?.[1] ?? name,
        mimeType: 'text/markdown',
        text,
      };
    });
  return [overview, ...pages];
}
