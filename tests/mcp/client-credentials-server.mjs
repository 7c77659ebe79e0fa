// An MCP server over streamable HTTP whose authorization server only knows the client
// credentials grant (the MCP extension oauth-client-credentials): protected resource metadata,
// authorization server metadata, and a token endpoint taking either the client's secret as
// HTTP Basic (client `agent-test`, secret CLIENT_SECRET) or a JWT assertion signed with the
// client's private key (private_key_jwt, ES256; the key pair is made at start and the private
// key printed for the client). Tokens say they last an hour; the tool `revoke` revokes every
// token issued so far (its own call included), so the client has to fetch another. The tool
// `whoami` says which token the call carried, as a number (the first issued is 1).
// Prints one JSON line when ready: {"url", "private_key_pem"}.
import { randomUUID } from "node:crypto";
import express from "express";
import * as jose from "jose";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";

const CLIENT_ID = "agent-test";
const secret = process.env.CLIENT_SECRET || "client-secret-value";
const { publicKey, privateKey } = await jose.generateKeyPair("ES256", { extractable: true });
const idpKeys = await jose.generateKeyPair("ES256");
const tokens = new Map();
let issued = 0;

const app = express();
const listener = app.listen(0, "127.0.0.1");
const base = await new Promise((resolve) =>
  listener.once("listening", () => resolve(`http://127.0.0.1:${listener.address().port}`)),
);
const mcpUrl = `${base}/mcp`;
const prm = `${base}/.well-known/oauth-protected-resource/mcp`;

app.get("/.well-known/oauth-protected-resource/mcp", (req, res) =>
  res.json({ resource: mcpUrl, authorization_servers: [base] }));
app.get("/.well-known/oauth-authorization-server", (req, res) =>
  res.json({
    issuer: base,
    authorization_endpoint: `${base}/authorize`,
    token_endpoint: `${base}/token`,
    response_types_supported: ["code"],
    grant_types_supported: ["client_credentials"],
    token_endpoint_auth_methods_supported: ["client_secret_basic", "private_key_jwt"],
    token_endpoint_auth_signing_alg_values_supported: ["ES256"],
  }));

// Who the token request comes from, or why it is refused.
async function client(req) {
  const basic = req.headers.authorization;
  if (basic?.startsWith("Basic ")) {
    const [id, given] = Buffer.from(basic.slice(6), "base64").toString("utf-8").split(":");
    return id === CLIENT_ID && decodeURIComponent(given) === secret ? id : null;
  }
  if (req.body.client_assertion_type === "urn:ietf:params:oauth:client-assertion-type:jwt-bearer") {
    const { payload } = await jose.jwtVerify(req.body.client_assertion, publicKey, { audience: base });
    return payload.iss === CLIENT_ID && payload.sub === CLIENT_ID ? CLIENT_ID : null;
  }
  return null;
}

const ID_JAG = "urn:ietf:params:oauth:token-type:id-jag";
const idToken = await new jose.SignJWT({ sub: "person@example.com" })
  .setProtectedHeader({ alg: "ES256" }).setIssuer(`${base}/idp`).setAudience("idp-client")
  .setExpirationTime("1h").sign(idpKeys.privateKey);

app.post("/idp/token", express.urlencoded({ extended: false }), async (req, res) => {
  const body = req.body;
  if (body.grant_type !== "urn:ietf:params:oauth:grant-type:token-exchange"
    || body.requested_token_type !== ID_JAG
    || body.subject_token_type !== "urn:ietf:params:oauth:token-type:id_token"
    || body.audience !== base || body.resource !== mcpUrl) {
    return res.status(400).json({ error: "invalid_request" });
  }
  try {
    const { payload } = await jose.jwtVerify(body.subject_token, idpKeys.publicKey, { audience: "idp-client" });
    const grant = await new jose.SignJWT({ sub: payload.sub, resource: mcpUrl, client_id: CLIENT_ID })
      .setProtectedHeader({ alg: "ES256", typ: "oauth-id-jag+jwt" }).setIssuer(`${base}/idp`)
      .setAudience(base).setExpirationTime("5m").sign(idpKeys.privateKey);
    res.json({ access_token: grant, issued_token_type: ID_JAG, token_type: "N_A" });
  } catch {
    res.status(400).json({ error: "invalid_grant" });
  }
});

app.post("/token", express.urlencoded({ extended: false }), async (req, res) => {
  if (req.body.grant_type === "urn:ietf:params:oauth:grant-type:jwt-bearer") {
    const who = await client(req).catch(() => null);
    if (!who) return res.status(401).json({ error: "invalid_client" });
    try {
      const { payload } = await jose.jwtVerify(req.body.assertion, idpKeys.publicKey, { audience: base });
      if (payload.client_id !== who || payload.resource !== mcpUrl) throw new Error("not for this client");
    } catch {
      return res.status(400).json({ error: "invalid_grant" });
    }
    return res.json(issue());
  }
  if (req.body.grant_type !== "client_credentials") {
    return res.status(400).json({ error: "unsupported_grant_type" });
  }
  if (req.body.resource !== mcpUrl) {
    return res.status(400).json({ error: "invalid_target" });
  }
  const who = await client(req).catch(() => null);
  if (!who) return res.status(401).json({ error: "invalid_client" });
  res.json(issue());
});

function issue() {
  const token = randomUUID();
  issued += 1;
  tokens.set(token, { number: issued, revoked: false });
  return { access_token: token, token_type: "Bearer", expires_in: 3600 };
}

app.post("/mcp", express.json(), async (req, res) => {
  const token = req.headers.authorization?.replace(/^Bearer /, "");
  const data = token && tokens.get(token);
  if (!data || data.revoked) {
    res.set("WWW-Authenticate", `Bearer error="invalid_token", resource_metadata="${prm}"`);
    return res.status(401).json({ error: "invalid_token" });
  }
  const server = new McpServer({ name: "client-credentials", version: "1.0.0" });
  server.registerTool(
    "whoami",
    { description: "Says which token the call carried.", annotations: { readOnlyHint: true } },
    async () => ({ content: [{ type: "text", text: `signed in with token number ${data.number}` }] }),
  );
  server.registerTool(
    "revoke",
    { description: "Revokes every token issued so far.", annotations: { readOnlyHint: true } },
    async () => {
      for (const issuedToken of tokens.values()) issuedToken.revoked = true;
      return { content: [{ type: "text", text: "revoked" }] };
    },
  );
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  res.on("close", () => { transport.close(); server.close(); });
  await server.connect(transport);
  await transport.handleRequest(req, res, req.body);
});
app.get("/mcp", (req, res) => res.status(405).end());
app.delete("/mcp", (req, res) => res.status(405).end());
console.log(JSON.stringify({
  url: mcpUrl, private_key_pem: await jose.exportPKCS8(privateKey),
  idp_token_endpoint: `${base}/idp/token`, id_token: idToken,
}));
