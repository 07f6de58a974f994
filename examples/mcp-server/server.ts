/**
 * An MCP server (Streamable HTTP, stateless) with one tool, `whoami`, protected as an OAuth
 * resource server of one realm by the verifier's `protectedResource`: MCP clients find the realm
 * in its RFC 9728 metadata, register themselves, sign the user in and call the tool with a token
 * for this resource holding the `tools:call` scope.
 *
 * Run it: `node examples/run.mjs mcp-server` (see docs/agents-mcp.md).
 */
import type { Server } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import express from 'express';
import { protectedResource, type VerifiedAccessToken } from '../../verifier/src/index.js';

export interface McpExampleOptions {
  /** The realm's issuer, e.g. `http://localhost:3000/realms/default`. */
  issuer: string;
  /** This server's MCP endpoint, registered as a resource of the realm, e.g. `http://127.0.0.1:8787/mcp`. */
  resource: string;
  /** The scope calling the tool needs (default `tools:call`). */
  scope?: string;
}

/** The Express app: the metadata document and the MCP endpoint at the resource's path. */
export function createMcpApp(options: McpExampleOptions): express.Express {
  const scope = options.scope ?? 'tools:call';
  const api = protectedResource({
    issuer: options.issuer,
    resource: options.resource,
    scopes: [scope],
    resourceName: 'Example MCP server',
  });
  const path = new URL(options.resource).pathname;
  const app = express();
  app.use(api.metadata);
  app.use(express.json());

  app.post(path, api.protect(), async (req, res) => {
    const token = (req as { accessToken?: VerifiedAccessToken }).accessToken as VerifiedAccessToken;
    // The SDK hands `req.auth` to the tools as `extra.authInfo`.
    Object.assign(req, {
      auth: { token: '', clientId: token.clientId ?? '', scopes: token.scopes, expiresAt: token.exp, extra: { sub: token.sub } },
    });
    const server = mcpServer();
    // Stateless: a server and a transport per request, as the SDK's stateless examples do.
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  });
  // No server-initiated stream and no sessions in stateless mode.
  app.all(path, api.protect(), (_req, res) => {
    res
      .status(405)
      .set('Allow', 'POST')
      .json({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed' }, id: null });
  });
  return app;
}

function mcpServer(): McpServer {
  const server = new McpServer({ name: 'identity-example', version: '1.0.0' });
  server.registerTool('whoami', { title: 'Who am I', description: 'The signed-in user and the app acting for them' }, async (extra) => {
    const sub = String(extra.authInfo?.extra?.sub ?? '');
    const clientId = extra.authInfo?.clientId ?? '';
    return {
      content: [{ type: 'text', text: `You are ${sub}, through the app ${clientId}.` }],
      structuredContent: { sub, clientId, scopes: extra.authInfo?.scopes ?? [] },
    };
  });
  return server;
}

/** Starts the server from the environment: ISSUER, RESOURCE (default http://127.0.0.1:8787/mcp). */
export async function main(env: NodeJS.ProcessEnv = process.env): Promise<Server> {
  const issuer = env.ISSUER ?? 'http://localhost:3000/realms/default';
  const resource = env.RESOURCE ?? 'http://127.0.0.1:8787/mcp';
  const url = new URL(resource);
  const app = createMcpApp({ issuer, resource });
  return new Promise((resolve) => {
    const server = app.listen(Number(url.port || 80), url.hostname, () => {
      console.warn(`MCP server at ${resource} (metadata at ${url.origin}/.well-known/oauth-protected-resource${url.pathname})`);
      resolve(server);
    });
  });
}
