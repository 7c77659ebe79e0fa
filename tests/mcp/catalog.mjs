// An MCP server over stdio, on the official SDK, with prompts and resources besides tools:
// the prompt `greet` (argument `name`, required; `language`, optional) and `review` (a user
// message and an example answer), the resources `notes://readme` (text) and `notes://logo`
// (binary), and the tool `add_note`, which adds the resource `notes://<title>` — the SDK then
// sends notifications/resources/list_changed.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

const server = new McpServer(
  { name: "catalog", version: "1.0.0" },
  {
    capabilities: {
      tools: { listChanged: true },
      prompts: { listChanged: true },
      resources: { listChanged: true },
    },
  },
);

server.registerPrompt(
  "greet",
  {
    title: "Greet someone",
    description: "Asks for a greeting of a person.",
    argsSchema: { name: z.string().describe("Who to greet"), language: z.string().optional() },
  },
  ({ name, language }) => ({
    messages: [
      {
        role: "user",
        content: { type: "text", text: `Say hello to ${name} in ${language ?? "French"}.` },
      },
    ],
  }),
);

server.registerPrompt("review", { description: "Asks for a code review." }, () => ({
  messages: [
    { role: "user", content: { type: "text", text: "Review my last change." } },
    { role: "assistant", content: { type: "text", text: "Which file?" } },
    { role: "user", content: { type: "text", text: "src/main.rs" } },
  ],
}));

server.registerResource(
  "readme",
  "notes://readme",
  { description: "What the notes are.", mimeType: "text/plain" },
  async (uri) => ({
    contents: [{ uri: uri.href, mimeType: "text/plain", text: "The notes of the catalog server." }],
  }),
);

server.registerResource(
  "logo",
  "notes://logo",
  { mimeType: "image/png" },
  async (uri) => ({
    contents: [{ uri: uri.href, mimeType: "image/png", blob: Buffer.from("not a png").toString("base64") }],
  }),
);

server.registerTool(
  "add_note",
  {
    description: "Adds a note, as the resource notes://<title>.",
    inputSchema: { title: z.string(), text: z.string() },
  },
  async ({ title, text }) => {
    server.registerResource(title, `notes://${title}`, { mimeType: "text/plain" }, async (uri) => ({
      contents: [{ uri: uri.href, mimeType: "text/plain", text }],
    }));
    return { content: [{ type: "text", text: `Added notes://${title}.` }] };
  },
);

await server.connect(new StdioServerTransport());
