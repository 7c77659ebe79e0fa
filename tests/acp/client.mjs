// Drives `agent acp` as an editor would, with the official ACP TypeScript SDK, and prints one
// JSON line per step with everything the agent sent, for the agent-cli test to check.
//
// Usage: node client.mjs <workspace> <agent binary> [agent args...]
//
// 1. initialize (offering the editor's file system), session/new, a prompt whose tool calls
//    read and write through the editor and ask for permission (the write_file is allowed
//    once, a bash call is rejected);
// 2. a second prompt, cancelled while the model is still answering;
// 3. session/fork before goal 2, session/list;
// 4. a second agent process: initialize, session/load of the same session (the replay);
// 5. a third one with --max-iterations 1 and an MCP server named by the editor: its tool runs,
//    the turn ends with max_turn_requests, then session/close;
// 6. a fourth one: `/goal` alone, `/goal TEXT --check CMD` (the turn works until the check
//    passes), `/goal` again.
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { Readable, Writable } from "node:stream";

import { client, methods, ndJsonStream } from "@agentclientprotocol/sdk";

const [workspace, binary, ...agentArgs] = process.argv.slice(2);

function print(step, value) {
  process.stdout.write(JSON.stringify({ step, ...value }) + "\n");
}

/// One agent process and a client connected to it; `updates` and `permissions` collect what
/// the agent sent.
function connect(extraArgs = []) {
  const child = spawn(binary, ["acp", ...agentArgs, ...extraArgs], {
    cwd: workspace,
    stdio: ["pipe", "pipe", "inherit"],
  });
  const stream = ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
  const seen = { updates: [], permissions: [], reads: [], writes: [] };
  const app = client({ name: "acp-test-client" })
    .onNotification(methods.client.session.update, ({ params }) => {
      seen.updates.push(params);
    })
    .onRequest(methods.client.session.requestPermission, ({ params }) => {
      seen.permissions.push(params);
      const title = params.toolCall.title ?? "";
      const choice = title.startsWith("bash") ? "reject_once" : "allow_once";
      return { outcome: { outcome: "selected", optionId: choice } };
    })
    // The editor's file system: what the user sees (an unsaved edit), and saves to disk.
    .onRequest(methods.client.fs.readTextFile, ({ params }) => {
      seen.reads.push(params);
      return { content: "The answer is 42 (unsaved edit).\n" };
    })
    .onRequest(methods.client.fs.writeTextFile, ({ params }) => {
      seen.writes.push(params);
      writeFileSync(params.path, params.content);
      return {};
    });
  return { child, stream, app, seen };
}

async function firstRun() {
  const { child, stream, app, seen } = connect();
  let sessionId;
  await app.connectWith(stream, async (agent) => {
    const init = await agent.request(methods.agent.initialize, {
      protocolVersion: 1,
      clientCapabilities: { fs: { readTextFile: true, writeTextFile: true } },
    });
    print("initialize", { response: init });

    const created = await agent.request(methods.agent.session.new, {
      cwd: workspace,
      mcpServers: [],
    });
    sessionId = created.sessionId;
    print("new", { response: created });

    const answered = await agent.request(methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: "Answer from the notes" }],
    });
    print("prompt", {
      response: answered,
      updates: seen.updates.splice(0),
      permissions: seen.permissions.splice(0),
      reads: seen.reads.splice(0),
      writes: seen.writes.splice(0),
    });

    const waiting = agent.request(methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: "Now think for a long time" }],
    });
    // Cancel once the model has started answering.
    for (let i = 0; i < 300 && !seen.updates.some((u) => u.update.sessionUpdate === "agent_message_chunk"); i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await agent.notify(methods.agent.session.cancel, { sessionId });
    const cancelled = await waiting;
    print("cancel", { response: cancelled, updates: seen.updates.splice(0) });

    // The unstable session/fork, before goal 2 (through _meta, as the protocol gives no position).
    const forked = await agent.request("session/fork", {
      sessionId,
      cwd: workspace,
      mcpServers: [],
      _meta: { goal: "2" },
    });
    // The fork takes a prompt of its own, in the same process that wrote it.
    const forkAnswer = await agent.request(methods.agent.session.prompt, {
      sessionId: forked.sessionId,
      prompt: [{ type: "text", text: "Write the answer another way" }],
    });
    print("fork", { response: forked, answer: forkAnswer, updates: seen.updates.splice(0) });

    const listed = await agent.request(methods.agent.session.list, {});
    print("list", { response: listed });

    let unknown;
    try {
      await agent.request(methods.agent.session.load, { sessionId: "no-such-session", cwd: workspace, mcpServers: [] });
    } catch (error) {
      unknown = { code: error.code, message: error.message };
    }
    print("load_unknown", { error: unknown });
  });
  child.kill();
  return sessionId;
}

async function reload(sessionId) {
  const { child, stream, app, seen } = connect();
  await app.connectWith(stream, async (agent) => {
    await agent.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
    const loaded = await agent.request(methods.agent.session.load, {
      sessionId,
      cwd: workspace,
      mcpServers: [],
    });
    print("load", { response: loaded, updates: seen.updates.splice(0) });
  });
  child.kill();
}

/// A third process limited to one model call: the turn ends with max_turn_requests; then the
/// session is closed and a prompt to it is refused.
async function limited() {
  const { child, stream, app, seen } = connect(["--max-iterations", "1"]);
  await app.connectWith(stream, async (agent) => {
    await agent.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
    // The editor hands the session an MCP server of its own (server-everything over stdio).
    const mcpServers = [{ name: "everything", command: "node", args: [process.env.EVERYTHING_ENTRY, "stdio"], env: [] }];
    const { sessionId } = await agent.request(methods.agent.session.new, { cwd: workspace, mcpServers });
    const answered = await agent.request(methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: "Read it all" }],
    });
    const closed = await agent.request(methods.agent.session.close, { sessionId });
    let refused;
    try {
      await agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "More" }] });
    } catch (error) {
      refused = { code: error.code, message: error.message };
    }
    print("limited", { response: answered, closed, refused, updates: seen.updates.splice(0) });
  });
  child.kill();
}

/// The `/goal` command: advertised when the session opens, then used as an editor user would.
async function goal() {
  const { child, stream, app, seen } = connect();
  await app.connectWith(stream, async (agent) => {
    await agent.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
    const { sessionId } = await agent.request(methods.agent.session.new, { cwd: workspace, mcpServers: [] });
    const ask = async (text) => {
      const response = await agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] });
      return { response, updates: seen.updates.splice(0) };
    };
    const before = await ask("/goal");
    const worked = await ask("/goal Write out.txt --check test -f out.txt");
    const after = await ask("/goal");
    print("goal", { sessionId, before, worked, after });
  });
  child.kill();
}

const sessionId = await firstRun();
await reload(sessionId);
await limited();
await goal();
