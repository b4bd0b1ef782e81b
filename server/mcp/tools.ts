/**
 * The MCP tools, one per operation, as `npm run generate` writes them from the spec (scripts/mcp-tools.ts):
 * which of them a key sees, and how a tool call becomes the API request it stands for and its answer a tool result.
 * The same for the server at /mcp (an in-process request) and the stdio server (a request through client/).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { PROJECT_ROOT } from '../platform/project-root';
import { holds } from '../platform/scopes';

type JsonSchema = Record<string, unknown>;

/** What the server needs to call a tool's operation; MCP clients never see it. */
export interface McpToolOperation {
  method: 'get' | 'put' | 'post' | 'delete' | 'patch';
  /** The `/v2` path, `{name}` where a path parameter goes. */
  path: string;
  pathParams: string[];
  queryParams: string[];
  /** Whether the tool's `body` input is the request's JSON body. */
  body: boolean;
  /** Whether the tool's `idempotencyKey` input is sent as `Idempotency-Key`. */
  idempotencyKey: boolean;
  scope: string;
  /** The spec tag and the path's first segment after the version: what `?tags=` matches. */
  tag: string;
  segment: string;
}

export interface McpTool {
  name: string;
  title: string;
  description: string;
  inputSchema: JsonSchema & { type: 'object' };
  outputSchema?: JsonSchema & { type: 'object' };
  annotations: { title: string; readOnlyHint: boolean; destructiveHint: boolean; idempotentHint: boolean };
  operation: McpToolOperation;
}

export const MCP_TOOLS_FILE = join(PROJECT_ROOT, 'generated', 'mcp-tools.json');

export const readTools = (): McpTool[] => JSON.parse(readFileSync(MCP_TOOLS_FILE, 'utf8')) as McpTool[];

/** `campaign,Email accounts`: matches a tool's path segment or its tag, in any case. */
export function parseTagFilter(value: unknown): string[] {
  if (typeof value !== 'string' || !value.trim()) return [];
  return value
    .split(',')
    .map((t) => t.trim().toLowerCase())
    .filter(Boolean);
}

/** The tools a key with `scopes` may call (every tool when the scopes are not known), within the tag filter. */
export function visibleTools(tools: McpTool[], scopes: readonly string[] | undefined, tags: string[]): McpTool[] {
  return tools.filter(
    ({ operation: op }) =>
      (!scopes || holds(scopes, op.scope)) &&
      (!tags.length || tags.includes(op.segment.toLowerCase()) || tags.includes(op.tag.toLowerCase())),
  );
}

/** A tool as tools/list shows it. */
export const listed = ({ operation: _operation, ...tool }: McpTool): Tool => tool;

/** The API request a tool call stands for. */
export interface ToolRequest {
  method: string;
  /** Path and query string. */
  url: string;
  body?: unknown;
  idempotencyKey?: string;
}

/** What the API answered. */
export interface ToolResponse {
  status: number;
  body: string;
  contentType: string;
  retryAfter?: string;
}

/** An input the tool does not take, or a path parameter missing: answered in the API's v2 error format. */
class ToolInputError extends Error {
  constructor(
    message: string,
    readonly field: string,
    readonly location: 'path' | 'body',
  ) {
    super(message);
  }
}

export function toRequest(tool: McpTool, args: Record<string, unknown> = {}): ToolRequest {
  const op = tool.operation;
  const known = new Set([
    ...op.pathParams,
    ...op.queryParams,
    ...(op.body ? ['body'] : []),
    ...(op.idempotencyKey ? ['idempotencyKey'] : []),
  ]);
  for (const name of Object.keys(args)) {
    if (!known.has(name)) throw new ToolInputError(`${tool.name} takes no input named ${name}.`, name, 'body');
  }
  const path = op.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = args[name];
    if (typeof value !== 'string' && typeof value !== 'number') {
      throw new ToolInputError(`${name} is required.`, `path.${name}`, 'path');
    }
    return encodeURIComponent(String(value));
  });
  const query = new URLSearchParams();
  for (const name of op.queryParams) {
    const value = args[name];
    if (value === undefined || value === null) continue;
    for (const v of Array.isArray(value) ? value : [value]) {
      query.append(name, typeof v === 'object' ? JSON.stringify(v) : String(v as string | number | boolean));
    }
  }
  const search = query.toString();
  return {
    method: op.method.toUpperCase(),
    url: search ? `${path}?${search}` : path,
    body: op.body ? (args.body ?? (op.method === 'get' ? undefined : {})) : undefined,
    idempotencyKey: typeof args.idempotencyKey === 'string' ? args.idempotencyKey : undefined,
  };
}

/** The tool result of an answer: its body, and for a failure `isError` with the API's error body (and Retry-After). */
export function toResult(tool: McpTool, response: ToolResponse): CallToolResult {
  const json = response.contentType.includes('application/json') ? parse(response.body) : undefined;
  if (response.status >= 400) {
    const error = {
      status: response.status,
      ...(json && typeof json === 'object' ? json : { error: response.body }),
      ...(response.retryAfter ? { retryAfter: Number(response.retryAfter) } : {}),
    };
    return { isError: true, content: [{ type: 'text', text: JSON.stringify(error) }] };
  }
  const structured =
    tool.outputSchema && json && typeof json === 'object' ? (json as Record<string, unknown>) : undefined;
  return {
    content: [{ type: 'text', text: json === undefined ? response.body : JSON.stringify(json) }],
    ...(structured ? { structuredContent: structured } : {}),
  };
}

/** A tool call the server could not make into a request, as the API would answer bad input. */
export function inputErrorResult(err: unknown): CallToolResult | undefined {
  if (!(err instanceof ToolInputError)) return undefined;
  const body = {
    status: 400,
    error: err.message,
    code: 'validation_error',
    statusCode: 400,
    details: [{ field: err.field, location: err.location, message: err.message, code: 'input' }],
  };
  return { isError: true, content: [{ type: 'text', text: JSON.stringify(body) }] };
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
