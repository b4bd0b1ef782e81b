/**
 * The example page: the typed client (client/) in a browser, no framework. Lists the workspace's campaigns
 * and the newest messages of its unibox. The server must allow this page's origin (CORS_ORIGINS) when the
 * API is on another origin. Bundled by scripts/build-examples.ts (esbuild), served at /examples/ when
 * SERVE_EXAMPLES=1.
 */
import { createClient, unwrap } from '../../client';

const $ = (id: string) => document.getElementById(id)!;

function fill(list: HTMLElement, lines: string[], empty: string): void {
  list.replaceChildren(...(lines.length ? lines : [empty]).map((text) => Object.assign(document.createElement('li'), { textContent: text })));
}

async function load(baseUrl: string, apiKey: string): Promise<void> {
  const status = $('status');
  status.className = '';
  status.textContent = 'Loading…';
  try {
    const api = createClient({ baseUrl, apiKey });
    const campaigns = unwrap(await api.GET('/v1/campaign/list', { params: { query: { limit: 100 } } })).data;
    fill($('campaigns'), campaigns.items.map((c) => `${c.name} (${c.status})`), 'No campaigns yet.');
    const inbox = unwrap(await api.GET('/v2/email/list', { params: { query: { limit: 20 } } })).data;
    fill($('inbox'), inbox.items.map((m) => `${m.direction === 'inbound' ? 'From' : 'To'} ${m.direction === 'inbound' ? m.from : m.to}: ${m.subject}`), 'No messages yet.');
    status.textContent = `${campaigns.pagination.total} campaigns, ${inbox.items.length} messages shown.`;
  } catch (err) {
    status.className = 'error';
    status.textContent = `Failed: ${err instanceof Error ? err.message : String(err)}`;
  }
}

const params = new URLSearchParams(location.hash.slice(1));
const baseInput = $('baseUrl') as HTMLInputElement;
const keyInput = $('apiKey') as HTMLInputElement;
baseInput.value = params.get('baseUrl') ?? location.origin;
keyInput.value = params.get('apiKey') ?? '';
$('connect').addEventListener('submit', (event) => {
  event.preventDefault();
  void load(baseInput.value, keyInput.value);
});
if (keyInput.value) void load(baseInput.value, keyInput.value);
