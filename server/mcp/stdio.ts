/**
 * `npm run mcp`: the MCP server over stdio, for an agent on the same machine (Claude Desktop, Cursor). Every tool
 * call is a request to the HTTP API through the typed client (client/), with the key of `API_KEY` at `API_BASE_URL`
 * (default http://localhost:3000): the server applies the key's scopes, quota, idempotency and audit as to any
 * request. It lists every tool, within `MCP_TAGS` (`campaign,contact`): the API answers a call the key may not make
 * with 403, an isError result naming the scope. Nothing but the protocol goes to stdout.
 */
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createClient, type ApiClient } from '../../client';
import { readBundledSpec } from '../platform/project-root';
import { readGuides } from './guides';
import { createMcpServer } from './server';
import { parseTagFilter, readTools, visibleTools, type ToolRequest, type ToolResponse } from './tools';

type Call = (
  path: string,
  init: { headers: Record<string, string>; body?: unknown; parseAs: 'text' },
) => Promise<{ data?: string; error?: string; response: Response }>;

/** A tool's request through the client: no retries, so a 429 comes back to the agent with its Retry-After. */
const dispatcher =
  (client: ApiClient) =>
  async (request: ToolRequest): Promise<ToolResponse> => {
    const call = (client as unknown as Record<string, Call>)[request.method];
    const headers: Record<string, string> = { accept: 'application/json' };
    if (request.idempotencyKey) headers['Idempotency-Key'] = request.idempotencyKey;
    const { data, error, response } = await call(request.url, { headers, body: request.body, parseAs: 'text' });
    return {
      status: response.status,
      body: data ?? error ?? '',
      contentType: response.headers.get('content-type') ?? '',
      retryAfter: response.headers.get('retry-after') ?? undefined,
    };
  };

async function main(): Promise<void> {
  const apiKey = process.env.API_KEY;
  if (!apiKey) throw new Error('API_KEY is not set: the MCP server calls the API with this key.');
  const client = createClient({ apiKey, baseUrl: process.env.API_BASE_URL || 'http://localhost:3000', retry: false });
  const spec = readBundledSpec();
  const tools = readTools();
  const server = createMcpServer({
    name: spec.info.title,
    version: spec.info.version,
    tools,
    visible: visibleTools(tools, undefined, parseTagFilter(process.env.MCP_TAGS)),
    guides: readGuides(spec.info.description ?? ''),
    dispatch: dispatcher(client),
  });
  await server.connect(new StdioServerTransport());
}

main().catch((err: unknown) => {
  console.error(`MCP server (stdio) failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
