// One prompt through `agent acp`, driven by the official ACP TypeScript SDK as an editor drives
// it, and one JSON line with what the agent sent: the prompt's answer, every permission
// request, every session update.
//
// Usage: node prompt.mjs <workspace> <agent binary> <prompt text> [agent args...]
//
// The client offers no file system. It answers each permission request "allow always" when the
// request offers it, and "reject once" otherwise: an agent that keeps "always" where it must
// not (a call its approval rules cannot check) would offer it again, and the call would run.
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";

import { client, methods, ndJsonStream } from "@agentclientprotocol/sdk";

const [workspace, binary, text, ...agentArgs] = process.argv.slice(2);

const child = spawn(binary, ["acp", ...agentArgs], {
  cwd: workspace,
  stdio: ["pipe", "pipe", "inherit"],
});
const stream = ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
const seen = { updates: [], permissions: [] };
const app = client({ name: "acp-prompt-client" })
  .onNotification(methods.client.session.update, ({ params }) => {
    seen.updates.push(params);
  })
  .onRequest(methods.client.session.requestPermission, ({ params }) => {
    seen.permissions.push(params);
    const always = params.options.some((option) => option.optionId === "allow_always");
    const choice = always ? "allow_always" : "reject_once";
    return { outcome: { outcome: "selected", optionId: choice } };
  });

await app.connectWith(stream, async (agent) => {
  await agent.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
  const created = await agent.request(methods.agent.session.new, { cwd: workspace, mcpServers: [] });
  const response = await agent.request(methods.agent.session.prompt, {
    sessionId: created.sessionId,
    prompt: [{ type: "text", text }],
  });
  process.stdout.write(
    JSON.stringify({ sessionId: created.sessionId, response, ...seen }) + "\n",
  );
});
child.kill();
