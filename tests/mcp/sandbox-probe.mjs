// A minimal MCP server over stdio for tests of the sandbox MCP servers run in: its tools write a
// file, show whether environment variables are set, open a TCP connection, and read every
// process's environment in /proc, each answering with what happened (the error code when the
// system refused).
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { createInterface } from "node:readline";

const send = (message) => process.stdout.write(JSON.stringify(message) + "\n");
const text = (id, value) =>
  send({ jsonrpc: "2.0", id, result: { content: [{ type: "text", text: value }] } });

const tools = [
  {
    name: "write",
    description: "Writes `content` to the file at `path`.",
    inputSchema: {
      type: "object",
      properties: { path: { type: "string" }, content: { type: "string" } },
      required: ["path", "content"],
    },
  },
  {
    name: "env",
    description: "Says which of `names` are set in the environment.",
    inputSchema: {
      type: "object",
      properties: { names: { type: "array", items: { type: "string" } } },
      required: ["names"],
    },
  },
  {
    name: "proc",
    description: "Reads the environment of every process in /proc and says which hold `marker`.",
    inputSchema: {
      type: "object",
      properties: { marker: { type: "string" } },
      required: ["marker"],
    },
  },
  {
    name: "connect",
    description: "Opens a TCP connection to 127.0.0.1:`port`.",
    inputSchema: {
      type: "object",
      properties: { port: { type: "integer" } },
      required: ["port"],
    },
  },
];

const call = (id, name, args) => {
  if (name === "write") {
    try {
      writeFileSync(args.path, args.content);
      text(id, `wrote ${args.path}`);
    } catch (error) {
      text(id, `refused: ${error.code}`);
    }
  } else if (name === "env") {
    text(id, args.names.map((n) => `${n}=${n in process.env ? process.env[n] : "(unset)"}`).join("\n"));
  } else if (name === "proc") {
    const seen = [];
    for (const pid of readdirSync("/proc").filter((entry) => /^[0-9]+$/.test(entry))) {
      try {
        if (readFileSync(`/proc/${pid}/environ`, "latin1").includes(args.marker)) {
          seen.push(pid);
        }
      } catch {
        // A process that went away, or one this server may not read.
      }
    }
    text(id, seen.length ? `seen in ${seen.length} processes` : "seen nowhere");
  } else if (name === "connect") {
    try {
      const socket = connect(args.port, "127.0.0.1", () => {
        socket.end();
        text(id, "connected");
      });
      socket.on("error", (error) => text(id, `refused: ${error.code}`));
    } catch (error) {
      text(id, `refused: ${error.code}`);
    }
  }
};

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
        serverInfo: { name: "sandbox-probe", version: "1.0.0" },
      },
    });
  } else if (message.method === "tools/list") {
    send({ jsonrpc: "2.0", id: message.id, result: { tools } });
  } else if (message.method === "tools/call") {
    call(message.id, message.params.name, message.params.arguments ?? {});
  }
});
