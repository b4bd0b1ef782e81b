/**
 * The MCP server at /mcp on the API's port, over Streamable HTTP (sessions named by `Mcp-Session-Id`). The key
 * comes as `Authorization: Bearer` or `X-API-Key`. A session starts with `initialize`, which is admitted like any
 * request (the key checked, one request counted); its tools are those the key's scopes allow, within `?tags=`. The
 * session's later messages carry the same key. Every tool call is the API request it stands for, dispatched into
 * the app in this process: validation, scopes, quota, idempotency and audit (actor `mcp`) are the app's own.
 *
 * Sessions live in this process: behind a balancer, keep a client on one process (sticky sessions).
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Router, type NextFunction, type Request, type Response } from 'express';
import inject from 'light-my-request';
import { LRUCache } from 'lru-cache';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { ApiError, unauthorized } from '../http/errors';
import { markFromMcp } from '../http/channel';
import type { AuthContext } from '../http/admission';
import { hashKey } from '../platform/key-hash';
import type { BundledSpec } from '../platform/project-root';
import { readGuides } from './guides';
import { createMcpServer } from './server';
import { parseTagFilter, readTools, visibleTools, type ToolRequest, type ToolResponse } from './tools';

export const MCP_PATH = '/mcp';
/** Open sessions kept per process; the least recently used one is closed past this. */
const MAX_SESSIONS = 1000;

export interface McpHttpOptions {
  /** The app a tool call is dispatched into. */
  app: (req: IncomingMessage, res: ServerResponse) => void;
  /** The API's key check and quota count (server/http/auth.ts): sets `res.locals.auth`, throws its 401 or 429. */
  admit: (req: Request, res: Response, next: NextFunction) => Promise<void>;
  spec: BundledSpec;
}

interface Session {
  transport: StreamableHTTPServerTransport;
  server: Server;
  keyHash: string;
}

/** The key of a request: `Authorization: Bearer <key>`, else `X-API-Key`. */
function presentedKey(req: Request): string | undefined {
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(req.get('authorization') ?? '');
  return bearer?.[1] ?? (req.get('x-api-key') || undefined);
}

/**
 * Express gives each request and response its own prototypes, over Node's: the in-process request's and response's
 * own methods (the response's writes that light-my-request collects) must stay theirs. (Handing light-my-request the
 * app itself would instead change the app's prototypes for every request it serves.)
 */
function keepOwnMethods(o: object): void {
  const proto = Object.getPrototypeOf(o) as Record<string, unknown>;
  for (const name of Object.getOwnPropertyNames(proto)) {
    if (name !== 'constructor' && typeof proto[name] === 'function') {
      Object.defineProperty(o, name, { value: proto[name], writable: true, configurable: true });
    }
  }
}

export function mcpRouter(options: McpHttpOptions): Router {
  const tools = readTools();
  const guides = readGuides(options.spec.info.description ?? '');
  const sessions = new LRUCache<string, Session>({
    max: MAX_SESSIONS,
    dispose: (session) => void session.transport.close(),
  });

  /** Runs a tool's request through the app, as the key's request from the agent's address. */
  const dispatcher =
    (apiKey: string, remoteAddress: string) =>
    async (request: ToolRequest): Promise<ToolResponse> => {
      const headers: Record<string, string> = { 'x-api-key': apiKey, accept: 'application/json' };
      if (request.body !== undefined) headers['content-type'] = 'application/json';
      if (request.idempotencyKey) headers['idempotency-key'] = request.idempotencyKey;
      const response = await inject(
        (req, res) => {
          markFromMcp(req);
          keepOwnMethods(req);
          keepOwnMethods(res);
          options.app(req, res);
        },
        {
          method: request.method as 'GET',
          url: request.url,
          headers,
          payload: request.body === undefined ? undefined : JSON.stringify(request.body),
          remoteAddress,
        },
      );
      const retryAfter = response.headers['retry-after'];
      return {
        status: response.statusCode,
        body: response.payload,
        contentType: String(response.headers['content-type'] ?? ''),
        retryAfter: retryAfter === undefined ? undefined : String(retryAfter),
      };
    };

  const startSession = async (req: Request, res: Response, apiKey: string): Promise<void> => {
    let admitted = false;
    await options.admit(req, res, () => {
      admitted = true;
    });
    if (!admitted) return;
    const auth = res.locals.auth as AuthContext;
    const server = createMcpServer({
      name: options.spec.info.title,
      version: options.spec.info.version,
      tools,
      visible: visibleTools(tools, auth.scopes, parseTagFilter(req.query.tags)),
      guides,
      dispatch: dispatcher(apiKey, req.ip ?? '127.0.0.1'),
    });
    const keyHash = hashKey(apiKey);
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      onsessioninitialized: (id) => {
        sessions.set(id, { transport, server, keyHash });
      },
      onsessionclosed: (id) => {
        sessions.delete(id);
      },
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  };

  const router = Router();
  router.all(MCP_PATH, async (req, res) => {
    res.locals.apiVersion = 'v2';
    const apiKey = presentedKey(req);
    try {
      if (!apiKey) throw unauthorized('Missing API key. Send it as Authorization: Bearer <key> or in X-API-Key.');
      const sessionId = req.get('mcp-session-id');
      if (!sessionId) {
        if (req.method !== 'POST' || !isInitializeRequest(req.body)) {
          throw new ApiError(400, 'validation_error', 'Start a session with initialize (no Mcp-Session-Id).');
        }
        // The API's key check reads X-API-Key.
        req.headers['x-api-key'] = apiKey;
        return await startSession(req, res, apiKey);
      }
      const session = sessions.get(sessionId);
      // A session of another key is none of this one's business.
      if (!session || session.keyHash !== hashKey(apiKey)) {
        throw new ApiError(404, 'not_found', 'No MCP session with this Mcp-Session-Id: initialize again.');
      }
      await session.transport.handleRequest(req, res, req.body);
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) res.set('WWW-Authenticate', 'Bearer realm="mcp"');
      throw err;
    }
  });
  return router;
}
