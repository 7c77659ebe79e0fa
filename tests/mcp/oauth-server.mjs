// An MCP server over streamable HTTP behind OAuth, on the official SDK's authorization support:
// the SDK's authorization server (metadata, dynamic client registration, PKCE, tokens) on the
// same port as the MCP endpoint `/mcp`, which wants a bearer token and points to its protected
// resource metadata. Sign-in is approved at once (the authorization page redirects straight
// back with a code). Access tokens last TOKEN_SECONDS (default 2) and come with refresh tokens,
// so a client has to refresh. The tool `whoami` says which token was used, as a number: the
// first token issued is 1, the first refreshed one 2, and so on.
// Prints `listening on <url>` when ready.
import { randomUUID } from "node:crypto";
import express from "express";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { mcpAuthRouter, getOAuthProtectedResourceMetadataUrl } from "@modelcontextprotocol/sdk/server/auth/router.js";
import { requireBearerAuth } from "@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js";
import { DemoInMemoryAuthProvider } from "@modelcontextprotocol/sdk/examples/server/demoInMemoryOAuthProvider.js";

const seconds = Number(process.env.TOKEN_SECONDS || 2);
let issued = 0;

class ShortLivedTokens extends DemoInMemoryAuthProvider {
  issue(clientId, scopes, resource) {
    const token = randomUUID();
    const refresh = randomUUID();
    issued += 1;
    this.tokens.set(token, {
      token, clientId, scopes, resource, number: issued,
      expiresAt: Date.now() + seconds * 1000, type: "access",
    });
    this.tokens.set(refresh, { token: refresh, clientId, scopes, resource, type: "refresh" });
    return { access_token: token, token_type: "bearer", expires_in: seconds, refresh_token: refresh, scope: scopes.join(" ") };
  }
  async exchangeAuthorizationCode(client, code) {
    const data = this.codes.get(code);
    if (!data || data.client.client_id !== client.client_id) throw new Error("Invalid authorization code");
    this.codes.delete(code);
    return this.issue(client.client_id, data.params.scopes || [], data.params.resource);
  }
  async exchangeRefreshToken(client, refreshToken) {
    const data = this.tokens.get(refreshToken);
    if (!data || data.type !== "refresh" || data.clientId !== client.client_id) throw new Error("Invalid refresh token");
    this.tokens.delete(refreshToken);
    return this.issue(client.client_id, data.scopes, data.resource);
  }
  async verifyAccessToken(token) {
    const data = this.tokens.get(token);
    if (!data || data.type !== "access" || data.expiresAt < Date.now()) throw new Error("Invalid or expired token");
    return { token, clientId: data.clientId, scopes: data.scopes, expiresAt: Math.floor(data.expiresAt / 1000), extra: { number: data.number } };
  }
}

const provider = new ShortLivedTokens();
const app = express();
const listener = app.listen(0, "127.0.0.1");
const base = await new Promise((resolve) =>
  listener.once("listening", () => resolve(`http://127.0.0.1:${listener.address().port}`)),
);
const mcpUrl = new URL(`${base}/mcp`);
app.use(mcpAuthRouter({ provider, issuerUrl: new URL(base), resourceServerUrl: mcpUrl, scopesSupported: ["mcp:tools"] }));
const bearer = requireBearerAuth({ verifier: provider, resourceMetadataUrl: getOAuthProtectedResourceMetadataUrl(mcpUrl) });

app.post("/mcp", express.json(), bearer, async (req, res) => {
  const server = new McpServer({ name: "oauth-protected", version: "1.0.0" });
  server.registerTool(
    "whoami",
    { description: "Says which token the call carried.", annotations: { readOnlyHint: true } },
    async () => ({ content: [{ type: "text", text: `signed in with token number ${req.auth.extra.number}` }] }),
  );
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  res.on("close", () => { transport.close(); server.close(); });
  await server.connect(transport);
  await transport.handleRequest(req, res, req.body);
});
app.get("/mcp", (req, res) => res.status(405).end());
app.delete("/mcp", (req, res) => res.status(405).end());
console.log(`listening on ${mcpUrl}`);
