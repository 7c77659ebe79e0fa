// A minimal MCP server over stdio for tests: it answers the handshake and lists one tool,
// `wait`, but never answers a call to it (a server that hangs mid-run).
import { createInterface } from "node:readline";

const send = (message) => process.stdout.write(JSON.stringify(message) + "\n");

createInterface({ input: process.stdin }).on("line", (line) => {
  let message;
  try {
    message = JSON.parse(line);
  } catch {
    return;
  }
  if (message.method === "initialize") {
    send({
      jsonrpc: "2.0",
      id: message.id,
      result: {
        protocolVersion: message.params.protocolVersion,
        capabilities: { tools: {} },
        serverInfo: { name: "silent-tools", version: "1.0.0" },
      },
    });
  } else if (message.method === "tools/list") {
    send({
      jsonrpc: "2.0",
      id: message.id,
      result: {
        tools: [
          {
            name: "wait",
            description: "Never returns.",
            inputSchema: { type: "object", properties: {} },
          },
        ],
      },
    });
  }
  // tools/call and everything else: no answer, ever.
});
