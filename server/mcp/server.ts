/**
 * One MCP server (a session's, or the stdio process's): the tools a key sees, each call made as the API request
 * it stands for through `dispatch` (the app in process, or the HTTP API through client/), the guides as resources
 * and the prompts. It knows no domain: what a call may do and what it answers is the API's to say.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { getPrompt, prompts } from './prompts';
import type { Guide } from './guides';
import {
  inputErrorResult,
  listed,
  toRequest,
  toResult,
  type McpTool,
  type ToolRequest,
  type ToolResponse,
} from './tools';

export interface McpServerOptions {
  name: string;
  version: string;
  /** Every tool of the spec: any may be called, and the API answers a key without its scope with 403. */
  tools: McpTool[];
  /** The tools tools/list shows (the key's scopes and the tag filter). */
  visible: McpTool[];
  guides: Guide[];
  dispatch(request: ToolRequest): Promise<ToolResponse>;
}

export function createMcpServer(options: McpServerOptions): Server {
  const server = new Server(
    { name: options.name, version: options.version },
    {
      capabilities: { tools: {}, resources: {}, prompts: {} },
      instructions:
        'Each tool is one operation of the API, run with your API key under its scopes and quota. A failed call ' +
        'answers isError with the API error body (code, message, details naming the fields): correct the input ' +
        'and call again. Pass idempotencyKey to a create and reuse it when you retry. Read guide://api first.',
    },
  );
  const byName = new Map(options.tools.map((t) => [t.name, t]));

  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: options.visible.map(listed) }));
  server.setRequestHandler(CallToolRequestSchema, async ({ params }) => {
    const tool = byName.get(params.name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `No tool named ${params.name}.`);
    let request: ToolRequest;
    try {
      request = toRequest(tool, params.arguments);
    } catch (err) {
      const result = inputErrorResult(err);
      if (result) return result;
      throw err;
    }
    return toResult(tool, await options.dispatch(request));
  });

  server.setRequestHandler(ListResourcesRequestSchema, () => ({
    resources: options.guides.map(({ text: _text, ...resource }) => resource),
  }));
  server.setRequestHandler(ReadResourceRequestSchema, ({ params }) => {
    const guide = options.guides.find((g) => g.uri === params.uri);
    if (!guide) throw new McpError(ErrorCode.InvalidParams, `No resource ${params.uri}.`);
    return { contents: [{ uri: guide.uri, mimeType: guide.mimeType, text: guide.text }] };
  });

  server.setRequestHandler(ListPromptsRequestSchema, () => ({ prompts: prompts() }));
  server.setRequestHandler(GetPromptRequestSchema, ({ params }) => {
    let prompt;
    try {
      prompt = getPrompt(params.name, params.arguments);
    } catch (err) {
      throw new McpError(ErrorCode.InvalidParams, (err as Error).message);
    }
    if (!prompt) throw new McpError(ErrorCode.InvalidParams, `No prompt named ${params.name}.`);
    return prompt;
  });
  return server;
}
