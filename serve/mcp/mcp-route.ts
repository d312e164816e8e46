// The MCP tool server at {base_url}/mcp (Streamable HTTP, the official SDK), in the API's own
// process behind the same x-api-key check (a missing or invalid key is a 403 before any MCP
// exchange). Stateless: each POST gets its own McpServer and transport (the SDK's stateless
// pattern), with the tools bound to the caller's key; JSON responses, no server-sent events, as no
// tool streams. Each tool is the HTTP call it mirrors (tools.ts), made to this server.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type Koa from 'koa';
import { CREDITS_REMAINING_HEADER, CREDITS_USED_HEADER } from '../billing/holds.ts';
import { HttpError } from '../http/http-error.ts';
import { TOOLS, type ToolDef } from './tools.ts';

const MCP_SERVER_INFO = { name: 'content-intelligence', version: '1.0.1' };

/** The tool's HTTP call with the caller's key; its JSON as the result, a non-2xx answer as a tool error carrying the status and body. */
async function callTool(
  baseUrl: string,
  key: string,
  version: string | null,
  tool: ToolDef,
  args: Record<string, unknown>,
): Promise<CallToolResult> {
  const call = tool.http(args);
  const res = await fetch(`${baseUrl}${call.path}`, {
    method: call.method,
    headers: {
      'x-api-key': key,
      ...(version ? { 'X-Service-Version': version } : {}),
      ...(call.body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...call.headers,
    },
    body: call.body === undefined ? undefined : JSON.stringify(call.body),
  });
  const text = await res.text();
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    body = { error: text };
  }
  const meta = {
    httpStatus: res.status,
    ...(res.headers.get(CREDITS_USED_HEADER) ? { creditsUsed: Number(res.headers.get(CREDITS_USED_HEADER)) } : {}),
    ...(res.headers.get(CREDITS_REMAINING_HEADER) ? { creditsRemaining: Number(res.headers.get(CREDITS_REMAINING_HEADER)) } : {}),
  };
  if (res.status >= 400) {
    const error = { status: res.status, ...body };
    return { isError: true, content: [{ type: 'text', text: JSON.stringify(error) }], structuredContent: error, _meta: meta };
  }
  return { content: [{ type: 'text', text }], structuredContent: body, _meta: meta };
}

function mcpServerFor(baseUrl: string, key: string, version: string | null): McpServer {
  const server = new McpServer(MCP_SERVER_INFO, {
    instructions:
      'Content intelligence over social posts: search (billed per row), narrative and ' +
      'visual-pattern maps (free), asynchronous analysis jobs (billed), usage and health. ' +
      'Credits: 1 credit = 1.00 USD; each tool description says what it costs.',
  });
  for (const tool of TOOLS) {
    server.registerTool(tool.name, { description: tool.description, inputSchema: tool.input }, (args: Record<string, unknown>) =>
      callTool(baseUrl, key, version, tool, args),
    );
  }
  return server;
}

/** The transport's own refusals are JSON-RPC errors; they reach the caller in the API's error shape. */
async function jsonRpcErrorBody(res: Response): Promise<{ error: string; jsonrpc_code?: number }> {
  const text = await res.text();
  try {
    const e = (JSON.parse(text) as { error?: { code?: number; message?: string } }).error;
    if (e?.message) return { error: e.message, ...(typeof e.code === 'number' ? { jsonrpc_code: e.code } : {}) };
  } catch {
    // not JSON: the text itself
  }
  return { error: text || `HTTP ${res.status}` };
}

/**
 * Koa handler for {base_url}/mcp, mounted after the key check and the body parser. The SDK's
 * web-standard transport answers with a Response, which becomes Koa's answer: the access log sees
 * its real status, and an error (406 without the accept header, 415, 400 for a message that is
 * not JSON-RPC) takes the API's `{error, request_id}` shape. Stateless and without streams, so only
 * POST is served (405 with Allow: POST for the rest, as the MCP transport allows).
 */
export function mcpHandler(selfUrl: () => string): Koa.Middleware {
  return async (ctx) => {
    if (ctx.method !== 'POST')
      throw new HttpError(
        405,
        { error: `method ${ctx.method} is not allowed on ${ctx.path} (allowed: POST; this MCP server is stateless and does not stream)` },
        { Allow: 'POST' },
      );
    const server = mcpServerFor(selfUrl(), ctx.get('x-api-key'), ctx.get('x-service-version') || null);
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    try {
      await server.connect(transport);
      const headers = new Headers();
      for (const [k, v] of Object.entries(ctx.headers)) if (typeof v === 'string') headers.set(k, v);
      const req = new Request(`http://mcp.local${ctx.path}`, { method: 'POST', headers, body: JSON.stringify(ctx.request.body ?? null) });
      const res = await transport.handleRequest(req, { parsedBody: ctx.request.body });
      if (res.status >= 400) throw new HttpError(res.status, await jsonRpcErrorBody(res));
      ctx.status = res.status;
      res.headers.forEach((v, k) => {
        if (k !== 'content-length') ctx.set(k, v);
      });
      // A notification's 202 has no body (Koa would write the status text).
      ctx.body = await res.text();
    } finally {
      await transport.close();
      await server.close();
    }
  };
}
