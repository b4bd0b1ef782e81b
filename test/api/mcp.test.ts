/**
 * The MCP server through the official SDK's client: over Streamable HTTP at /mcp (tool calls dispatched into the
 * app in process) and over stdio (`npm run mcp`, calling this server through client/). Storage plays no part.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startTestServer, type TestServer, type TestWorkspace } from '../helpers/server';
import { describeOnEmbeddedDatabase } from '../helpers/binaries';
import { readBundledSpec, PROJECT_ROOT } from '../../server/platform/project-root';

const spec = readBundledSpec();
const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

/** The operationIds as spec/paths writes them: every operation but the `/v2` aliases of `/v1` ones. */
function writtenOperationIds(): string[] {
  const aliases = new Set(Object.keys(spec.paths).flatMap((p) => (p.startsWith('/v1/') ? ['/v2' + p.slice(3)] : [])));
  return Object.entries(spec.paths)
    .filter(([path]) => !aliases.has(path))
    .flatMap(([, item]) =>
      METHODS.flatMap((m) => {
        const op = (item as Record<string, { operationId: string } | undefined>)[m];
        return op ? [op.operationId] : [];
      }),
    )
    .sort();
}

let t: TestServer;
let ws: TestWorkspace;
let readOnlyKey: string;
const clients: Client[] = [];

async function connect(apiKey: string, query = ''): Promise<Client> {
  const client = new Client({ name: 'mcp-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${t.url}/mcp${query}`), {
      requestInit: { headers: { Authorization: `Bearer ${apiKey}` } },
    }),
  );
  clients.push(client);
  return client;
}

const textOf = (result: unknown) => (result as CallToolResult).content.map((c) => (c.type === 'text' ? c.text : ''))[0];
const errorOf = (result: unknown) => {
  expect((result as CallToolResult).isError).toBe(true);
  return JSON.parse(textOf(result)) as { status: number; error: string; code: string; retryAfter?: number };
};

beforeAll(async () => {
  t = await startTestServer();
  ws = await t.createWorkspace();
  const created = await ws.client.POST('/v2/api-key/create', { body: { name: 'Reader', scopes: ['campaigns:read'] } });
  readOnlyKey = created.data!.data.apiKey;
});

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await t?.close();
});

describeOnEmbeddedDatabase()('MCP over Streamable HTTP', () => {
  it('answers no key with 401 and WWW-Authenticate', async () => {
    const res = await fetch(`${t.url}/mcp`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} }),
    });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect(((await res.json()) as { code: string }).code).toBe('unauthorized');
  });

  it('lists one tool per operation (aliases once), named by operationId, each input a valid JSON Schema', async () => {
    const client = await connect(ws.apiKey);
    expect(client.getServerVersion()?.name).toBe(spec.info.title);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(writtenOperationIds());
    const ajv = addFormats(new Ajv2020({ strict: false }));
    for (const tool of tools) {
      expect(tool.name).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
      expect(tool.inputSchema.type).toBe('object');
      expect(() => ajv.compile(tool.inputSchema)).not.toThrow();
      if (tool.outputSchema) expect(() => ajv.compile(tool.outputSchema!)).not.toThrow();
      expect(JSON.stringify(tool.inputSchema)).not.toContain('$ref');
    }
    const create = tools.find((tool) => tool.name === 'createCampaign')!;
    expect(create.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false, idempotentHint: true });
    expect(tools.find((tool) => tool.name === 'listCampaigns')!.annotations).toMatchObject({ readOnlyHint: true });
    expect(tools.find((tool) => tool.name === 'deleteWebhook')!.annotations).toMatchObject({ destructiveHint: true });
  });

  it('calls a write and a read; a create retried with its idempotency key makes one campaign; audited as mcp', async () => {
    const client = await connect(ws.apiKey);
    const args = { idempotencyKey: 'mcp-create-1', body: { name: 'From an agent' } };
    const first = await client.callTool({ name: 'createCampaign', arguments: args });
    const again = await client.callTool({ name: 'createCampaign', arguments: args });
    expect(first.isError).toBeFalsy();
    const created = first.structuredContent as { data: { campaign: { id: string } } };
    expect((again.structuredContent as typeof created).data.campaign.id).toBe(created.data.campaign.id);

    const list = await client.callTool({ name: 'listCampaigns', arguments: { limit: 100 } });
    const items = (list.structuredContent as { data: { items: { id: string; name: string }[] } }).data.items;
    expect(items.filter((c) => c.name === 'From an agent')).toHaveLength(1);

    // The retry was a replay: one entry, the agent's key's, marked as made through MCP.
    const audit = await ws.client.GET('/v2/audit/list', { params: { query: { operation: 'createCampaign' } } });
    expect(audit.data!.data.items).toEqual([
      expect.objectContaining({ actor: 'mcp', keyId: ws.keyId, outcome: 201, address: '127.0.0.1' }),
    ]);
  });

  it("answers bad input as the API's 400 body, for the agent to correct", async () => {
    const client = await connect(ws.apiKey);
    const bad = errorOf(await client.callTool({ name: 'createCampaign', arguments: { body: { name: '' } } }));
    expect(bad).toMatchObject({ status: 400, code: 'validation_error' });
    expect(errorOf(await client.callTool({ name: 'listCampaigns', arguments: { nope: 1 } }))).toMatchObject({
      status: 400,
    });
  });

  it('shows a read-only key no tool it cannot use, and a call past its scope is a 403 naming the scope', async () => {
    const client = await connect(readOnlyKey);
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    expect(names).toContain('listCampaigns');
    expect(names).not.toContain('createCampaign');
    expect(names).not.toContain('searchPeople');
    const refused = errorOf(await client.callTool({ name: 'createCampaign', arguments: { body: { name: 'No' } } }));
    expect(refused).toMatchObject({ status: 403, code: 'insufficient_scope' });
    expect(refused.error).toContain('campaigns:write');
  });

  it('keeps the list to the tags asked for', async () => {
    const client = await connect(ws.apiKey, '?tags=campaign,Contacts');
    const { tools } = await client.listTools();
    expect(tools.length).toBeGreaterThan(5);
    expect(tools.map((tool) => tool.name)).toContain('addContacts');
    expect(tools.map((tool) => tool.name)).not.toContain('searchPeople');
  });

  it('serves the guides as resources and prompts that chain tools', async () => {
    const client = await connect(ws.apiKey);
    const { resources } = await client.listResources();
    expect(resources.map((r) => r.uri)).toEqual(expect.arrayContaining(['guide://api', 'guide://keys', 'guide://mcp']));
    const guide = await client.readResource({ uri: 'guide://keys' });
    expect((guide.contents[0] as { text: string }).text).toContain('# API keys and scopes');
    const { prompts } = await client.listPrompts();
    expect(prompts.map((p) => p.name)).toEqual(
      expect.arrayContaining(['setup-campaign-from-csv', 'summarise-replies-today']),
    );
    const prompt = await client.getPrompt({ name: 'setup-campaign-from-csv', arguments: { csv: 'email\na@b.co' } });
    expect(JSON.stringify(prompt.messages)).toContain('jobContactImport');
  });

  it('answers 429 past the quota with Retry-After, as an error result', async () => {
    const limited = await t.createWorkspace({ defaultPlan: true });
    const client = await connect(limited.apiKey);
    let result: unknown;
    for (let i = 0; i < 25; i += 1) {
      result = await client.callTool({ name: 'getRateLimits', arguments: {} });
      if ((result as CallToolResult).isError) break;
    }
    const refused = errorOf(result);
    expect(refused.status).toBe(429);
    expect(refused.retryAfter).toBeGreaterThan(0);
  });
});

describeOnEmbeddedDatabase()('MCP over stdio', () => {
  it('calls the API through the client with the key from the environment', async () => {
    const client = new Client({ name: 'mcp-stdio-test', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: ['--import', 'tsx', join(PROJECT_ROOT, 'server/mcp/stdio.ts')],
        env: {
          ...(process.env as Record<string, string>),
          API_KEY: ws.apiKey,
          API_BASE_URL: t.url,
          MCP_TAGS: 'campaign',
        },
        stderr: 'pipe',
      }),
    );
    clients.push(client);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toContain('listCampaigns');
    expect(tools.map((tool) => tool.name)).not.toContain('searchPeople');
    const list = await client.callTool({ name: 'listCampaigns', arguments: { limit: 5 } });
    expect(list.isError).toBeFalsy();
    expect(textOf(list)).toContain('"success":true');
    const created = await client.callTool({ name: 'createCampaign', arguments: { body: { name: 'Over stdio' } } });
    expect((created.structuredContent as { data: { campaign: { name: string } } }).data.campaign.name).toBe(
      'Over stdio',
    );
    const missing = errorOf(
      await client.callTool({
        name: 'getCampaignName',
        arguments: { campaignId: '0192f0c4-8f1e-7cc3-9d42-5c1b1f7c2a10' },
      }),
    );
    expect(missing.status).toBe(404);
  });
});
