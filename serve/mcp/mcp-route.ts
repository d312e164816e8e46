// The MCP tool server at {base_url}/mcp (Streamable HTTP, the official SDK), in the API's own
// process behind the same x-api-key check (a missing or invalid key is a 403 before any MCP
// exchange). Stateless: each POST gets its own McpServer and transport (the SDK's stateless
// pattern), with the tools bound to the caller's key; JSON responses, no server-sent events, as no
// tool streams. Each tool is the HTTP call it mirrors (tools.ts), made to this server.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type Koa from 'koa';
import { CREDITS_REMAINING_HEADER, CREDITS_USED_HEADER } from '../billing.ts';
import { TOOLS, type ToolDef } from './tools.ts';

export const MCP_SERVER_INFO = { name: 'content-intelligence', version: '1.0.1' };

/** The tool's HTTP call with the caller's key; its JSON as the result, a non-2xx answer as a tool error carrying the status and body. */
async function callTool(baseUrl: string, key: string, version: string | null, tool: ToolDef, args: Record<string, unknown>): Promise<CallToolResult> {
  const call = tool.http(args);
  const res = await fetch(`${baseUrl}${call.path}`, {
    method: call.method,
    headers: { 'x-api-key': key, ...(version ? { 'X-Service-Version': version } : {}), ...(call.body !== undefined ? { 'content-type': 'application/json' } : {}), ...call.headers },
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

export function mcpServerFor(baseUrl: string, key: string, version: string | null): McpServer {
  const server = new McpServer(MCP_SERVER_INFO, {
    instructions: 'Content intelligence over social posts: search (billed per row), narrative and visual-pattern maps (free), asynchronous analysis jobs (billed), usage and health. Credits: 1 credit = 1.00 USD; each tool description says what it costs.',
  });
  for (const tool of TOOLS) {
    server.registerTool(tool.name, { description: tool.description, inputSchema: tool.input }, (args: Record<string, unknown>) => callTool(baseUrl, key, version, tool, args));
  }
  return server;
}

/** Koa handler for {base_url}/mcp, mounted after the key check and the body parser. */
export function mcpHandler(selfUrl: () => string): Koa.Middleware {
  return async (ctx) => {
    const server = mcpServerFor(selfUrl(), ctx.get('x-api-key'), ctx.get('x-service-version') || null);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    // The transport writes the response itself; the status here is what the access log reads if it cannot.
    ctx.status = 200;
    ctx.respond = false;
    ctx.res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(ctx.req, ctx.res, ctx.request.body);
  };
}
