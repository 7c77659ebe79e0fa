// An MCP server over stdio, on the official SDK, that asks the person a question: the tool
// `greet` sends an elicitation (a form with a name and a favourite colour) and answers with
// what came back, or with the refusal.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";

const server = new McpServer({ name: "asking", version: "1.0.0" });

server.registerTool(
  "greet",
  { description: "Asks the person their name, then greets them.", annotations: { readOnlyHint: true } },
  async () => {
    const answer = await server.server.elicitInput({
      message: "Who is there?",
      requestedSchema: {
        type: "object",
        properties: {
          name: { type: "string", title: "Name" },
          colour: { type: "string", enum: ["red", "green", "blue"], default: "green" },
        },
        required: ["name"],
      },
    });
    const text =
      answer.action === "accept"
        ? `Hello ${answer.content.name}, who likes ${answer.content.colour}.`
        : `No answer: ${answer.action}.`;
    return { content: [{ type: "text", text }] };
  },
);

await server.connect(new StdioServerTransport());
