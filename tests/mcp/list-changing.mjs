// An MCP server over stdio, on the official SDK, whose tool list changes: calling `unlock`
// registers a second tool, `secret`, and the SDK then sends notifications/tools/list_changed.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";

const server = new McpServer(
  { name: "list-changing", version: "1.0.0" },
  { capabilities: { tools: { listChanged: true } } },
);

server.registerTool(
  "unlock",
  { description: "Adds the tool `secret`.", annotations: { readOnlyHint: true } },
  async () => {
    server.registerTool(
      "secret",
      { description: "Tells the secret.", annotations: { readOnlyHint: true } },
      async () => ({ content: [{ type: "text", text: "The secret is 42." }] }),
    );
    return { content: [{ type: "text", text: "Unlocked: the tool `secret` is there now." }] };
  },
);

await server.connect(new StdioServerTransport());
