/**
 * Which way a request came in: over the network, or from the MCP server's tool call, dispatched into the app in
 * the same process (server/mcp/). Only that dispatch can mark a request, so no header a caller sends can claim it.
 */
import type { Request } from 'express';
import type { KeyActor } from '../platform/cause';

const fromMcp = new WeakSet<object>();

/** Marks a request the MCP server dispatches (before Express sees it). */
export const markFromMcp = (req: object): void => {
  fromMcp.add(req);
};

/** Who the audit log and the credit ledger name for a request made with a key. */
export const keyActorOf = (req: Request): KeyActor => (fromMcp.has(req) ? 'mcp' : 'key');
