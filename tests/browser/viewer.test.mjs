// End-to-end test of the trace viewer in headless Chromium (Debian's /usr/bin/chromium, driven
// by playwright-core). It records the demo trace with the `agent` binary, serves it together
// with a scripted model, and checks the page against the API: the list, the DAG of the demo
// trace (node count, expanding an edge, explore lanes, abandoned goals), the messages of an
// edge, keyboard use, then a live run started over HTTP that the page follows without a reload
// (goals appearing, a dropped WebSocket resumed without a duplicate or missing event, an
// approval decided from the page). After the screenshots: the message box (an ended trace continued
// and followed live, a message queued for a running one, an error of a server without a model),
// Fork here, Rewind here and Diff, a trace without goals, a picture's thumbnail, the background shells, file contents in tool arguments and a command's output as
// lines, status icons that the fonts have, an exploration summed up by what its branches found, an
// answer growing on the page while a model server streams it piece by piece, and a plan changed on
// the page (reworded, a sub-goal added, a goal deleted) then run, and an MCP server's question
// answered with the page's form.
//
// Environment: AGENT_BIN (default: <repo>/target/debug/agent), VIEWER_SCREENSHOTS (a folder
// for the screenshots; default: a temporary folder). `cargo test -p agent-e2e --test browser`
// builds the binary and runs this file.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync, readFileSync, mkdirSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../..');
const CHROMIUM = '/usr/bin/chromium';
const AGENT = process.env.AGENT_BIN || join(root, 'target', 'debug', 'agent');
// The flags known to work on this project's machines: no sandbox (root), and no background
// connections to hosts the closed network refuses.
const CHROMIUM_ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];
const VIEWPORT = { width: 1280, height: 800 };

let work; // temporary folder of this run
let base; // http://127.0.0.1:<port>
let server; // the `agent serve` process
let serverLog = '';
let context; // the browser
let page;
let demoId;
let shots;
const pageErrors = [];

/** A port nobody listens on now. */
function freePort() {
  return new Promise((ok, fail) => {
    const probe = createServer();
    probe.once('error', fail);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => ok(port));
    });
  });
}

async function getJson(path, init) {
  const response = await fetch(base + path, init);
  const body = await response.json();
  assert.ok(response.ok, `${path}: ${response.status} ${JSON.stringify(body)}`);
  return body;
}

async function waitFor(what, check, timeoutMs = 15000) {
  const deadline = Date.now() + timeoutMs;
  let last;
  while (Date.now() < deadline) {
    try {
      last = await check();
      if (last) return last;
    } catch (error) {
      last = error;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  const shown = page ? await page.evaluate(() => ({
    hash: location.hash,
    conn: document.getElementById('conn')?.textContent,
    head: document.querySelector('.trace-head')?.textContent,
    approvals: document.querySelector('.approvals')?.textContent,
  })).catch((e) => String(e)) : null;
  throw new Error(`timed out waiting for ${what} (last: ${last})\npage: ${JSON.stringify(shown)}\nserver log:\n${serverLog}`);
}

before(async () => {
  assert.ok(existsSync(CHROMIUM), `${CHROMIUM} is missing: run scripts/setup-browser.sh (cargo xtask setup) to install Debian's chromium`);
  assert.ok(existsSync(AGENT), `the agent binary ${AGENT} is missing: cargo build -p goaltree-cli --bin agent`);
  work = mkdtempSync(join(tmpdir(), 'agent-viewer-test-'));
  shots = process.env.VIEWER_SCREENSHOTS ? resolve(root, process.env.VIEWER_SCREENSHOTS) : join(work, 'shots');
  mkdirSync(shots, { recursive: true });
  const traces = join(work, 'traces');
  const workspace = join(work, 'workspace');
  mkdirSync(workspace);
  // A file long enough that the viewer folds its contents.
  writeFileSync(join(workspace, 'notes.txt'), Array.from({ length: 80 }, (_, i) => `observation ${i + 1}: something was seen`).join('\n'));

  const demo = spawnSync(AGENT, ['demo', '--no-serve', '--trace-dir', traces], { encoding: 'utf8', timeout: 120000 });
  assert.equal(demo.status, 0, `agent demo failed:\n${demo.stderr}`);
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  server = spawn(AGENT, [
    'serve', '--port', String(port), '--trace-dir', traces,
    '--provider', 'scripted', '--script', join(here, 'live-script.json'), '--workspace', workspace,
  ], { stdio: ['ignore', 'pipe', 'pipe'] });
  server.stdout.on('data', (d) => { serverLog += d; });
  server.stderr.on('data', (d) => { serverLog += d; });
  const { traces: list } = await waitFor('the server', () => getJson('/api/traces'));
  demoId = list.find((t) => !t.parent_trace_id).trace_id;

  context = await chromium.launchPersistentContext(join(work, 'profile'), {
    executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS, viewport: VIEWPORT,
  });
  page = context.pages()[0] || await context.newPage();
  page.on('pageerror', (error) => pageErrors.push(error.message));
});

after(async () => {
  await context?.close();
  if (server && server.exitCode === null) server.kill('SIGTERM');
  if (work) rmSync(work, { recursive: true, force: true });
});

test('the list shows each trace with its sub-traces under it', async () => {
  const { traces } = await getJson('/api/traces');
  await page.goto(`${base}/`);
  await page.waitForSelector(`tr[data-trace-id="${demoId}"]`);
  const rows = await page.$$eval('table.traces tbody tr', (trs) => trs.map((tr) => ({ id: tr.dataset.traceId, sub: tr.classList.contains('sub') })));
  assert.equal(rows.length, traces.length);
  assert.equal(rows[0].id, demoId);
  const subs = traces.filter((t) => t.parent_trace_id === demoId).map((t) => t.trace_id).sort();
  assert.deepEqual(rows.slice(1).map((r) => r.id).sort(), subs);
  assert.ok(rows.slice(1).every((r) => r.sub));
  const task = traces.find((t) => t.trace_id === demoId).task;
  assert.equal(await page.textContent(`tr[data-trace-id="${demoId}"] td.task a`), task);
});

test('the demo trace is a DAG with one node per top-level goal', async () => {
  const { goal_tree: tree } = await getJson(`/api/traces/${encodeURIComponent(demoId)}`);
  await page.click(`tr[data-trace-id="${demoId}"] td.task a`);
  await page.waitForSelector('.dag .seq.root > .step');
  const top = tree.goals.filter((g) => g.parent_id === null);
  const nodes = await page.$$eval('.dag .seq.root > .step[data-goal-id]', (els) => els.map((e) => e.dataset.goalId));
  assert.deepEqual(nodes, top.map((g) => g.id));
  // Collapsed edges carry cumulative statistics.
  for (const goal of top) {
    const label = await page.textContent(`.dag .seq.root > .step[data-goal-id="${goal.id}"] .edge-label .stats`);
    assert.ok(label.startsWith(`${goal.cumulative_stats.message_count} msg`), `${goal.id}: ${label}`);
  }
  assert.equal(await page.locator('.dag .node.start').count(), 1);
  assert.match(await page.textContent('.dag .seq.root > .end'), /completed/);
});

test('expanding an edge shows the sub-goals, the abandoned one grey, and explore lanes', async () => {
  const { goal_tree: tree, sub_traces: subs } = await getJson(`/api/traces/${encodeURIComponent(demoId)}`);
  const parent = tree.goals.find((g) => tree.goals.some((c) => c.parent_id === g.id));
  const children = tree.goals.filter((g) => g.parent_id === parent.id);
  await page.click(`[data-toggle="${demoId}#${parent.id}"]`);
  const group = `.dag .group[data-goal-id="${parent.id}"]`;
  await page.waitForSelector(group);
  const shown = await page.$$eval(`${group} > .seq > .step[data-goal-id]`, (els) => els.map((e) => e.dataset.goalId));
  assert.deepEqual(shown, children.map((g) => g.id));
  // The group's own edge carries the goal's self statistics.
  const own = await page.textContent(`${group} > .edge.own .stats`);
  assert.ok(own.includes(`own: ${parent.self_stats.message_count} msg`), own);
  // Abandoned: grey, with the reason.
  const abandoned = children.find((g) => g.status === 'abandoned');
  const grey = page.locator(`${group} > .seq > .step[data-goal-id="${abandoned.id}"]`);
  assert.match(await grey.getAttribute('class'), /st-abandoned/);
  assert.ok((await grey.textContent()).includes(abandoned.summary));
  const color = await grey.locator('.card').evaluate((el) => getComputedStyle(el).backgroundColor);
  assert.equal(color, 'rgb(238, 240, 242)');
  // Explore: one lane per branch, between explore_start and explore_merge.
  const start = children.find((g) => g.type === 'explore_start');
  const lanes = await page.$$eval(`.lanes[data-explore="${start.id}"] > .lane`, (els) => els.map((e) => e.dataset.lane));
  assert.deepEqual(lanes, start.branch_ids);
  const order = await page.$$eval(`${group} > .seq > *`, (els) => els.map((e) => e.dataset.goalId || (e.classList.contains('lanes') ? 'lanes' : '?')));
  const merge = children.find((g) => g.type === 'explore_merge');
  assert.equal(order.indexOf('lanes'), order.indexOf(start.id) + 1);
  assert.equal(order.indexOf(merge.id), order.indexOf('lanes') + 1);
  // A lane expands into its sub-trace (this branch kept no goals: one edge to its result).
  const branch = subs.find((t) => t.trace_id === start.branch_ids[0]);
  await page.click(`[data-toggle="lane:${branch.trace_id}"]`);
  await page.waitForSelector(`.lane.open[data-lane="${branch.trace_id}"] .step`);
  assert.ok((await page.textContent(`.lane.open[data-lane="${branch.trace_id}"]`)).includes(branch.summary.slice(0, 40)));
  await page.click(`[data-toggle="lane:${branch.trace_id}"]`);
  await page.waitForSelector(`.lane.open[data-lane="${branch.trace_id}"]`, { state: 'detached' });
  // The abandoned goal's messages, with why it was abandoned, beside the graph.
  await page.click(`${group} > .seq > .step[data-goal-id="${abandoned.id}"] .edge-label`);
  await page.waitForSelector('.panel .messages');
  assert.ok((await page.textContent('.panel .goal-info')).includes(abandoned.summary));
  await page.mouse.move(0, 0);
  await page.screenshot({ path: join(shots, 'viewer-trace.png') });
  await page.click('.panel .close');
  await page.waitForSelector('.panel', { state: 'hidden' });
  // Collapsing merges the sub-goals back into their parent.
  await page.click(`${group} > .group-head [data-toggle]`);
  await page.waitForSelector(`.dag .seq.root > .step[data-goal-id="${parent.id}"]`);
  assert.equal(await page.locator('.dag .step[data-goal-id]').count(), tree.goals.filter((g) => g.parent_id === null).length);
});

test("an edge opens its goal's messages", async () => {
  const { goal_tree: tree } = await getJson(`/api/traces/${encodeURIComponent(demoId)}`);
  const first = tree.goals.find((g) => g.parent_id === null);
  const { messages } = await getJson(`/api/traces/${encodeURIComponent(demoId)}/messages?goal_id=${first.id}`);
  await page.click(`.dag .step[data-goal-id="${first.id}"] .edge-label`);
  await page.waitForSelector('.panel .messages');
  const ids = await page.$$eval('.panel .msg', (els) => els.map((e) => e.dataset.messageId));
  assert.deepEqual(ids, messages.map((m) => m.message_id));
  const call = messages.find((m) => m.role === 'assistant' && m.content.tool_calls?.length);
  const article = page.locator(`.panel .msg[data-message-id="${call.message_id}"]`);
  assert.ok((await article.textContent()).includes(call.content.tool_calls[0].name));
  assert.match(await article.locator('header').textContent(), /\d+(\.\d)?k? tok/);
  await page.keyboard.press('Escape');
  await page.waitForSelector('.panel', { state: 'hidden' });
});

test('the DAG works from the keyboard', async () => {
  const { goal_tree: tree } = await getJson(`/api/traces/${encodeURIComponent(demoId)}`);
  const parent = tree.goals.find((g) => tree.goals.some((c) => c.parent_id === g.id));
  await page.focus('.dag .node.start .card');
  await page.keyboard.press('ArrowDown');
  assert.equal(await page.evaluate(() => document.activeElement.dataset.key), `edge:${demoId}#1`);
  await page.keyboard.press('Enter');
  await page.waitForSelector('.panel .messages');
  await page.keyboard.press('Escape');
  await page.waitForSelector('.panel', { state: 'hidden' });
  await page.focus(`[data-key="edge:${demoId}#${parent.id}"]`);
  await page.keyboard.press('ArrowRight');
  await page.waitForSelector(`.dag .group[data-goal-id="${parent.id}"]`);
  assert.equal(await page.evaluate(() => document.activeElement.dataset.key), `edge:${demoId}#${parent.id}`);
  await page.keyboard.press('ArrowLeft');
  await page.waitForSelector(`.dag .group[data-goal-id="${parent.id}"]`, { state: 'detached' });
});

test('a running trace updates live, survives a dropped connection, and takes an approval', async () => {
  await page.evaluate(() => { window.__notReloaded = true; });
  const { trace_id: id } = await getJson('/api/traces', {
    method: 'POST', headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ task: 'Summarise notes.txt into summary.md', approval: true }),
  });
  await page.evaluate((hash) => { location.hash = hash; }, `#/traces/${encodeURIComponent(id)}`);
  const topSteps = '.dag .seq.root > .step[data-goal-id]';
  // Goals appear as the run adds them (the first turn waits 700 ms, so the page starts empty).
  await waitFor('the first goals', async () => (await page.locator(topSteps).count()) === 3);
  await waitFor('goal 1 in progress', async () => /st-in_progress/.test(await page.getAttribute(`${topSteps}[data-goal-id="1"]`, 'class') ?? ''));
  // Markup in a goal's description is shown as text.
  assert.ok((await page.textContent(`${topSteps}[data-goal-id="2"] .desc`)).includes('<b>format</b>'));
  assert.equal(await page.locator('.dag b').count(), 0);
  // The messages of the current goal grow while the panel is open; long output is folded.
  await page.click(`${topSteps}[data-goal-id="1"] .edge-label`);
  await waitFor('the read_file output, folded', async () => (await page.locator('.panel .msg.r-tool .fold').count()) === 1);
  // Drop the WebSocket in the middle of the run; the page reconnects from its last event.
  assert.equal(await page.evaluate(() => window.__viewer.watch.connects), 1);
  await page.evaluate(() => window.__viewer.watch.drop());
  await waitFor('the reconnect', async () => page.evaluate(() => window.__viewer.watch.connects === 2));
  // Expand goal 2 once it has sub-goals, then a lane into the branch's own goals, live.
  await waitFor('the exploration', async () => (await page.locator(`[data-toggle="${id}#2"]`).count()) === 1);
  await page.click(`[data-toggle="${id}#2"]`);
  await waitFor('two lanes', async () => (await page.locator('.lanes > .lane').count()) === 2);
  const firstLane = await page.getAttribute('.lanes > .lane', 'data-lane');
  await page.click(`[data-toggle="lane:${firstLane}"]`);
  await waitFor('the branch goals', async () => (await page.locator(`.lane.open[data-lane="${firstLane}"] .step[data-goal-id]`).count()) === 2);
  assert.match(await page.textContent(`.lane.open[data-lane="${firstLane}"] .step[data-goal-id="1"] .num`), /^A\.1$/);
  // The write waits for approval: approve it from the page.
  await page.waitForSelector('.approval button.approve', { timeout: 20000 });
  assert.match(await page.textContent('.approval'), /write_file/);
  await page.click('.approval button.approve');
  await waitFor('the run to complete', async () => (await page.locator('.dag .seq.root > .end.st-completed').count()) === 1, 20000);
  // No reload, and every event applied once, in order.
  assert.equal(await page.evaluate(() => window.__notReloaded), true);
  const { events } = await getJson(`/api/traces/${encodeURIComponent(id)}/events`);
  const applied = await page.evaluate(() => window.__viewer.watch.appliedIds);
  assert.deepEqual(applied, events.map((e) => e.event_id));
  // The page's graph matches the finished goal tree.
  const { goal_tree: tree, trace } = await getJson(`/api/traces/${encodeURIComponent(id)}`);
  assert.equal(trace.status, 'completed');
  const shown = await page.$$eval('.dag .step[data-goal-id], .dag .group[data-goal-id]', (els) => els
    .filter((e) => !e.closest('.lane'))
    .map((e) => [e.dataset.goalId, [...e.classList].find((c) => c.startsWith('st-'))]));
  const expected = tree.goals.map((g) => [g.id, `st-${g.status}`]);
  const byGoal = (a, b) => Number(a[0]) - Number(b[0]);
  assert.deepEqual(shown.sort(byGoal), expected.sort(byGoal));
  assert.ok(existsSync(join(work, 'workspace', 'summary.md')), 'the approved write ran');
});

test('screenshots of the list and of a trace at 1280x800', async () => {
  await page.evaluate(() => { location.hash = '#/'; });
  await page.waitForSelector('table.traces tbody tr.sub');
  await page.mouse.move(0, 0);
  await page.screenshot({ path: join(shots, 'viewer-list.png') });
  assert.deepEqual(pageErrors, [], 'errors on the page');
  for (const name of ['viewer-list.png', 'viewer-trace.png']) {
    const png = readFileSync(join(shots, name));
    assert.equal(png.readUInt32BE(16), VIEWPORT.width);
    assert.equal(png.readUInt32BE(20), VIEWPORT.height);
  }
});

// ---- after the screenshots, so that the traces these tests add stay out of them ----

/** Starts a run over HTTP and waits until the API says it has `status`. */
async function startRun(task, status = 'completed') {
  const { trace_id: id } = await getJson('/api/traces', {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ task }),
  });
  if (status) await waitFor(`${task}: ${status}`, async () => (await getJson(`/api/traces/${encodeURIComponent(id)}`)).trace.status === status, 20000);
  return id;
}

async function openTrace(id) {
  await page.evaluate((hash) => { location.hash = hash; }, `#/traces/${encodeURIComponent(id)}`);
  await waitFor('the trace page', async () => page.evaluate((traceId) => window.__viewer?.model.traceId === traceId && window.__viewer.watch.connects > 0, id));
}

/** The texts of the messages the panel shows, by role. */
async function panelTexts(role) {
  return page.$$eval(`.panel .msg.r-${role} .text`, (els) => els.map((e) => e.textContent));
}

test('every status icon is drawn from the fonts Debian has, not as an empty box', async () => {
  // The icons chosen from DejaVu Sans (regular and bold), Debian's default font.
  const DEJAVU_ICONS = new Set(['○', '◐', '◔', '✓', '✕', '‖', '⊘', '•']);
  await openTrace(demoId);
  await page.waitForSelector('.chip');
  const icons = await page.evaluate(() => window.__viewer.statusIcons);
  for (const status of ['pending', 'in_progress', 'completed', 'abandoned', 'running', 'waiting', 'interrupted', 'failed', 'cancelled', 'planned', 'incomplete', 'other']) {
    assert.ok(DEJAVU_ICONS.has(icons[status]), `${status}: ${icons[status]}`);
  }
  const chips = await page.$$eval('.chip', (els) => els.map((e) => [...e.textContent][0]));
  for (const icon of chips) assert.ok(DEJAVU_ICONS.has(icon), `a chip starts with ${icon}`);
  // Drawn with the chips' font, no icon may look like a character no font has (U+0378).
  const tofu = await page.evaluate((list) => {
    const chip = getComputedStyle(document.querySelector('.chip'));
    return list.filter((icon) => {
      const draw = (text, weight) => {
        const canvas = document.createElement('canvas');
        canvas.width = 48;
        canvas.height = 48;
        const g = canvas.getContext('2d');
        g.font = `${weight} 24px ${chip.fontFamily}`;
        g.fillText(text, 8, 34);
        return g.getImageData(0, 0, 48, 48).data.join(',');
      };
      return ['400', chip.fontWeight].some((weight) => draw(icon, weight) === draw('\u0378', weight));
    });
  }, [...new Set(Object.values(icons))]);
  assert.deepEqual(tofu, [], 'icons drawn as an empty box');
});

test('file contents in tool arguments show as lines, not \\n escapes', async () => {
  const { goal_tree: tree } = await getJson(`/api/traces/${encodeURIComponent(demoId)}`);
  const { messages } = await getJson(`/api/traces/${encodeURIComponent(demoId)}/messages`);
  const call = messages.flatMap((m) => (m.role === 'assistant' ? m.content.tool_calls || [] : []).map((c) => ({ m, c })))
    .find(({ c }) => c.name === 'write_file' && JSON.parse(c.arguments).content.includes('\n'));
  const content = JSON.parse(call.c.arguments).content;
  const goal = tree.goals.find((g) => g.id === call.m.goal_id && g.parent_id === null);
  await openTrace(demoId);
  await page.click(`.dag .seq.root > .step[data-goal-id="${goal.id}"] .edge-label`);
  const pre = page.locator(`.panel .msg[data-message-id="${call.m.message_id}"] .call pre`).first();
  await pre.waitFor();
  const shown = await pre.evaluate((e) => e.innerText);
  assert.ok(!shown.includes('\\n'), `an escaped line break: ${shown}`);
  const lines = shown.split('\n');
  assert.ok(lines.includes('content: |'), shown);
  for (const line of content.split('\n').filter((l) => l)) assert.ok(lines.includes(`  ${line}`), `${line} is not a line of:\n${shown}`);
  // Drawn as lines too: the <pre> is as tall as its lines.
  const { height, lineHeight } = await pre.evaluate((e) => ({ height: e.clientHeight, lineHeight: parseFloat(getComputedStyle(e).lineHeight) || 15 }));
  assert.ok(height >= content.split('\n').length * lineHeight, `${height}px for ${content.split('\n').length} lines`);
  await page.keyboard.press('Escape');
});

test('the output of a command shows as lines, not \\n escapes', async () => {
  const { trace_id: id } = await getJson('/api/traces', {
    method: 'POST', headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ task: 'Viewer tool output test: print three lines' }),
  });
  // The command waits for approval: given from the page.
  await openTrace(id);
  await page.waitForSelector('.approval button.approve', { timeout: 20000 });
  await page.click('.approval button.approve');
  await waitFor('the run to complete', async () => (await getJson(`/api/traces/${encodeURIComponent(id)}`)).trace.status === 'completed', 20000);
  const { messages } = await getJson(`/api/traces/${encodeURIComponent(id)}/messages`);
  const result = messages.find((m) => m.role === 'tool' && m.tool_name === 'bash');
  assert.ok(result, JSON.stringify(messages));
  const pre = page.locator(`.panel .msg[data-message-id="${result.message_id}"] pre`).first();
  await pre.waitFor();
  const shown = await pre.evaluate((e) => e.innerText);
  assert.ok(!shown.includes('\\n'), `an escaped line break: ${shown}`);
  const lines = shown.split('\n');
  for (const line of ['first line', 'second line', 'third line']) assert.ok(lines.includes(line), `${line} is not a line of:\n${shown}`);
  // Drawn as lines too: the <pre> is at least three lines tall.
  const { height, lineHeight } = await pre.evaluate((e) => ({ height: e.clientHeight, lineHeight: parseFloat(getComputedStyle(e).lineHeight) || 15 }));
  assert.ok(height >= 3 * lineHeight, `${height}px for three lines`);
});

test('a trace without goals shows its messages', async () => {
  const id = await startRun('Viewer plain question: what is 2 + 2?');
  const { messages } = await getJson(`/api/traces/${encodeURIComponent(id)}/messages`);
  assert.equal((await getJson(`/api/traces/${encodeURIComponent(id)}`)).goal_tree.goals.length, 0);
  await openTrace(id);
  await waitFor('the messages', async () => (await page.locator('.panel .msg').count()) === messages.length);
  assert.deepEqual(await page.$$eval('.panel .msg', (els) => els.map((e) => e.dataset.messageId)), messages.map((m) => m.message_id));
  assert.ok((await panelTexts('assistant')).includes('A plain answer,\nwith no plan.'));
  assert.doesNotMatch(await page.textContent('.dag'), /No goals yet/);
  assert.match(await page.textContent('.dag .no-goals'), /no goals: every message/);
  // Its one edge opens them again after the panel was closed.
  await page.click('.panel .close');
  await page.click('.dag .no-goals .edge-label');
  await waitFor('the messages again', async () => (await page.locator('.panel .msg').count()) === messages.length);
});

test("a message's picture shows as a thumbnail that links to the whole picture", async () => {
  // A 3×2 PNG, sent with the task to a model that takes pictures.
  const data = 'iVBORw0KGgoAAAANSUhEUgAAAAMAAAACCAIAAAASFvFNAAAAEElEQVR4nGP4z8AAQQxwFgBB0gX7h/C5SAAAAABJRU5ErkJggg==';
  const { trace_id: id } = await getJson('/api/traces', {
    method: 'POST', headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ task: 'Viewer picture question: what is in shot.png?', model: 'gpt-4o', images: [{ data, name: 'shot.png' }] }),
  });
  await waitFor('the run to end', async () => (await getJson(`/api/traces/${encodeURIComponent(id)}`)).trace.status === 'completed', 20000);
  const { messages } = await getJson(`/api/traces/${encodeURIComponent(id)}/messages`);
  const [picture] = messages.find((m) => m.role === 'user' && m.metadata?.images).metadata.images;
  await openTrace(id);
  await waitFor('the thumbnail', async () => (await page.locator('.panel .msg.r-user .pictures img').count()) === 1);
  const img = page.locator('.panel .msg.r-user .pictures img');
  // The browser loaded and decoded the picture from the API, at its size.
  await waitFor('the picture decoded', async () => img.evaluate((e) => e.complete && e.naturalWidth === 3 && e.naturalHeight === 2));
  assert.equal(await img.getAttribute('alt'), 'shot.png 3×2');
  const href = await page.locator('.panel .msg.r-user .pictures a').getAttribute('href');
  assert.equal(href, `/api/traces/${encodeURIComponent(id)}/pictures/${picture.id}`);
  const served = await fetch(base + href);
  assert.equal(served.headers.get('content-type'), 'image/png');
  assert.equal(Buffer.from(await served.arrayBuffer()).toString('base64'), data);
});

test("the run's background shells are listed in the trace's header", async () => {
  const { trace_id: id } = await getJson('/api/traces', {
    method: 'POST', headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ task: 'Viewer shell test: start the server' }),
  });
  const url = `/api/traces/${encodeURIComponent(id)}`;
  // The command waits for approval (the server's mode is `ask`): approve it over the API.
  const pending = await waitFor('the command to wait', async () => (await getJson(url)).pending_approvals[0], 20000);
  await getJson(`${url}/approvals/${encodeURIComponent(pending.tool_call_id)}`, {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ approve: true }),
  });
  await waitFor('the run to complete', async () => (await getJson(url)).trace.status === 'completed', 30000);
  const { messages } = await getJson(`${url}/messages`);
  const read = messages.filter((m) => m.tool_name === 'shell_output').pop();
  assert.ok(read.content.includes('ready'), read.content);
  const [shell] = read.metadata.shells;
  await openTrace(id);
  const item = page.locator(`.trace-head .shells li[data-shell-id="${shell.id}"]`);
  await waitFor('the shell in the header', async () => (await item.count()) === 1);
  const shown = await item.textContent();
  assert.ok(shown.includes('echo ready; sleep 30'), shown);
  // Running when the model last read it; the run's end stopped it, and the header says so,
  // with everything it printed.
  assert.equal(shell.state, 'running');
  const started = messages.find((m) => m.tool_name === 'bash' && m.metadata?.shell_logs);
  assert.equal(started.metadata.shells[0].state, 'killed');
  assert.equal(started.metadata.shell_logs[shell.id], 'ready\n');
  await waitFor('the end of the shell', async () => (await item.textContent()).includes('killed'));
  assert.ok((await item.textContent()).includes('ready'), await item.textContent());
  assert.match(await page.textContent('.trace-head .shells summary'), /Background shells \(1\)/);
});

test('an exploration is summed up by what its branches found', async () => {
  const { goal_tree: tree, sub_traces: subs } = await getJson(`/api/traces/${encodeURIComponent(demoId)}`);
  const start = tree.goals.find((g) => g.type === 'explore_start');
  await openTrace(demoId);
  await page.click(`[data-toggle="${demoId}#${start.parent_id}"]`);
  const node = page.locator(`.dag .step[data-goal-id="${start.id}"] .node .outcome`);
  await node.waitFor();
  const shown = await node.textContent();
  for (const id of start.branch_ids) assert.ok(!shown.includes(id), `a sub-trace id in ${shown}`);
  const first = subs.find((t) => t.trace_id === start.branch_ids[0]);
  assert.ok(shown.includes(first.summary.split('; ')[0]), `${shown} lacks what branch A found`);
  // The parent, collapsed, does not list sub-trace ids either.
  await page.click(`.dag .group[data-goal-id="${start.parent_id}"] > .group-head [data-toggle]`);
  const parent = await page.textContent(`.dag .seq.root > .step[data-goal-id="${start.parent_id}"] .node .outcome`);
  for (const id of start.branch_ids) assert.ok(!parent.includes(id), `a sub-trace id in ${parent}`);
  // The ids are links in the goal's panel, below what was found.
  await page.click(`[data-toggle="${demoId}#${start.parent_id}"]`);
  await page.click(`.dag .step[data-goal-id="${start.id}"] .node .card`);
  await page.waitForSelector('.panel .branches a');
  assert.deepEqual(await page.$$eval('.panel .branches a', (els) => els.map((e) => e.textContent)), start.branch_ids);
  assert.ok((await page.textContent('.panel .goal-info details')).includes(first.summary.split('; ')[0]));
  await page.keyboard.press('Escape');
});

test('the message box continues an ended trace, and the page follows the new turn live', async () => {
  const id = await startRun('Viewer continue test: greet me');
  const before = await getJson(`/api/traces/${encodeURIComponent(id)}`);
  await openTrace(id);
  await page.waitForSelector('.dag .seq.root > .end.st-completed');
  await page.evaluate(() => { window.__notReloaded = true; });
  assert.match(await page.textContent('.composer .hint'), /starts its next turn/);
  await page.fill('.composer textarea', 'Please say more');
  await page.press('.composer textarea', 'Enter');
  // The trace runs again (the answer takes 1.5 s), then ends again, on the same page.
  await waitFor('the trace running again', async () => (await page.locator('.trace-head .chip.st-running').count()) === 1);
  assert.equal(await page.locator('.dag .seq.root > .end').count(), 0, 'no END while the new turn runs');
  assert.match(await page.textContent('.composer .note'), /^Sent/);
  assert.equal(await page.inputValue('.composer textarea'), '');
  await waitFor('the user message on the page', async () => (await panelTexts('user')).includes('Please say more'));
  await waitFor('the answer on the page', async () => (await panelTexts('assistant')).includes('Here is more,\nas you asked.'));
  await waitFor('the end again', async () => (await page.locator('.dag .seq.root > .end.st-completed').count()) === 1);
  assert.equal(await page.evaluate(() => window.__notReloaded), true);
  // The answer shows its line break as one.
  const answer = page.locator('.panel .msg.r-assistant .text', { hasText: 'Here is more' });
  assert.ok((await answer.evaluate((e) => e.getClientRects()[0].height)) > 1.5 * parseFloat(await answer.evaluate((e) => getComputedStyle(e).lineHeight)));
  // The API agrees: completed again, with the message and the answer.
  const after = await getJson(`/api/traces/${encodeURIComponent(id)}`);
  assert.equal(after.trace.status, 'completed');
  assert.equal(after.trace.total_messages, before.trace.total_messages + 2);
  const { messages } = await getJson(`/api/traces/${encodeURIComponent(id)}/messages`);
  const sent = messages.find((m) => m.role === 'user' && m.content === 'Please say more');
  assert.equal(sent.metadata?.turn, 'continue');
  // Every event of both turns applied once, in order.
  const { events } = await getJson(`/api/traces/${encodeURIComponent(id)}/events`);
  assert.deepEqual(await page.evaluate(() => window.__viewer.watch.appliedIds), events.map((e) => e.event_id));
});

test('a message sent while the trace runs is queued, then shows as a user message', async () => {
  const id = await startRun('Viewer queue test: take your time', null);
  await openTrace(id);
  await waitFor('the running trace', async () => (await page.locator('.trace-head .chip.st-running').count()) === 1);
  assert.match(await page.textContent('.composer .hint'), /queued/);
  await page.fill('.composer textarea', 'A note while you work');
  await page.click('.composer button.send');
  await waitFor('the answer', async () => /Queued/.test(await page.textContent('.composer .note')));
  assert.equal(await page.inputValue('.composer textarea'), '');
  await waitFor('the queued message on the page', async () => (await panelTexts('user')).includes('A note while you work'), 20000);
  await waitFor('the note that it reached the model', async () => /reached the model/.test(await page.textContent('.composer .note')));
  await waitFor('the run to complete', async () => (await page.locator('.dag .seq.root > .end.st-completed').count()) === 1, 20000);
  const { messages } = await getJson(`/api/traces/${encodeURIComponent(id)}/messages`);
  const queued = messages.find((m) => m.role === 'user' && m.content === 'A note while you work');
  assert.equal(queued?.metadata?.turn, 'queued');
});

/**
 * A model server speaking OpenAI's chat completions: its first answer streams `pieces`, each
 * sent only when the test calls `next()`; any later request gets a short answer at once.
 */
async function pausingModel(pieces) {
  const waiting = [];
  let sent = 0;
  let requests = 0;
  const next = () => { sent += 1; waiting.splice(0).forEach((wake) => wake()); };
  const chunk = (delta, finish = null) => `data: ${JSON.stringify({
    id: 'chatcmpl-viewer', object: 'chat.completion.chunk', created: 0, model: 'gpt-4o-mini',
    choices: [{ index: 0, delta, finish_reason: finish }],
  })}\n\n`;
  const model = createHttpServer((req, res) => {
    let body = '';
    req.on('data', (d) => { body += d; });
    req.on('end', async () => {
      // Only chat requests count: what else the agent asks (a local server's window, its
      // models, Ollama's `POST /api/show`) is answered as a hosted API answers it, not found.
      if (req.method !== 'POST' || !req.url.endsWith('/chat/completions')) {
        res.writeHead(404, { 'Content-Type': 'application/json' });
        res.end('{"error":{"message":"not found"}}');
        return;
      }
      requests += 1;
      const first = requests === 1;
      const stream = JSON.parse(body || '{}').stream === true;
      const answer = first ? pieces : ['Nothing more.'];
      if (!stream) {
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({
          id: 'chatcmpl-viewer', object: 'chat.completion', created: 0, model: 'gpt-4o-mini',
          choices: [{ index: 0, message: { role: 'assistant', content: answer.join('') }, finish_reason: 'stop' }],
        }));
        return;
      }
      res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
      for (const [i, piece] of answer.entries()) {
        while (first && sent <= i) await new Promise((wake) => waiting.push(wake));
        res.write(chunk(i === 0 ? { role: 'assistant', content: piece } : { content: piece }));
      }
      res.write(chunk({}, 'stop'));
      res.end('data: [DONE]\n\n');
    });
  });
  await new Promise((ok) => model.listen(0, '127.0.0.1', ok));
  return { url: `http://127.0.0.1:${model.address().port}/v1`, next, close: () => model.close() };
}

test("the assistant's answer grows on the page while the model streams it", async () => {
  const pieces = ['The first piece arrives, ', 'then a second one, ', 'and the last piece ends it.'];
  const model = await pausingModel(pieces);
  const port = await freePort();
  const streamed = spawn(AGENT, [
    'serve', '--port', String(port), '--trace-dir', join(work, 'streamed-traces'),
    '--provider', 'openai', '--base-url', model.url, '--api-key', 'sk-test', '--model', 'gpt-4o-mini',
    '--workspace', join(work, 'workspace'),
  ], { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  streamed.stdout.on('data', (d) => { log += d; });
  streamed.stderr.on('data', (d) => { log += d; });
  const other = `http://127.0.0.1:${port}`;
  try {
    await waitFor('the streaming server', async () => (await fetch(`${other}/api/traces`)).ok);
    const response = await fetch(`${other}/api/traces`, {
      method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ task: 'Tell me something, slowly' }),
    });
    const { trace_id: id } = await response.json();
    assert.ok(response.ok, `${response.status}: ${log}`);
    await page.goto(`${other}/#/traces/${encodeURIComponent(id)}`);
    await waitFor('the live page', async () => page.evaluate((traceId) => window.__viewer?.model.traceId === traceId && window.__viewer.watch.connects > 0, id));
    const typing = () => page.evaluate(() => document.querySelector('p.typing:not([hidden]) .text')?.textContent ?? '');
    // The first piece shows while the model has sent nothing more.
    model.next();
    await waitFor('the first piece', async () => (await typing()).includes(pieces[0].trim()));
    assert.ok(!(await typing()).includes('second'), await typing());
    assert.equal(await page.locator('.panel .msg.r-assistant').count(), 0, 'no whole message yet');
    // The text grows with each piece, on the same page.
    model.next();
    await waitFor('the second piece', async () => (await typing()).includes(pieces[1].trim()));
    assert.ok(!(await typing()).includes('last piece'), await typing());
    model.next();
    // The whole answer, then the message in its place.
    await waitFor('the whole answer', async () => (await panelTexts('assistant')).includes(pieces.join('')));
    await waitFor('the typing line gone', async () => page.evaluate(() => document.querySelector('p.typing').hidden));
    // The run ends once the answer is recorded and the workspace's last snapshot taken.
    await waitFor('the run to end', async () => {
      const { trace } = await (await fetch(`${other}/api/traces/${encodeURIComponent(id)}`)).json();
      return trace.status !== 'running';
    });
    const { trace } = await (await fetch(`${other}/api/traces/${encodeURIComponent(id)}`)).json();
    assert.equal(trace.status, 'completed', log);
  } finally {
    streamed.kill('SIGTERM');
    model.close();
    await page.goto(`${base}/`);
  }
});

test('an error from the API is shown by the box, and the typed text stays', async () => {
  // The same traces served by a server without a model: it refuses runs.
  const port = await freePort();
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/API_KEY|BASE_URL|^AGENT_|^OPENAI|^ANTHROPIC/.test(k)));
  const home = join(work, 'home');
  mkdirSync(home, { recursive: true });
  const readOnly = spawn(AGENT, ['serve', '--port', String(port), '--trace-dir', join(work, 'traces')], {
    cwd: home, env: { ...env, HOME: home, XDG_CONFIG_HOME: join(home, '.config') }, stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  readOnly.stderr.on('data', (d) => { log += d; });
  try {
    const other = `http://127.0.0.1:${port}`;
    await waitFor('the read-only server', async () => (await fetch(`${other}/api/traces`)).ok);
    assert.match(log, /read-only/);
    await page.goto(`${other}/#/traces/${encodeURIComponent(demoId)}`);
    await page.waitForSelector('.dag .seq.root > .end.st-completed');
    await page.fill('.composer textarea', 'Try again\nwith two lines');
    await page.press('.composer textarea', 'Enter');
    await waitFor('the error', async () => /runs cannot be started on this server/.test(await page.textContent('.composer .note')));
    assert.equal(await page.getAttribute('.composer .note', 'role'), 'alert');
    assert.equal(await page.inputValue('.composer textarea'), 'Try again\nwith two lines');
    // An empty message is not sent at all.
    await page.fill('.composer textarea', '   ');
    await page.press('.composer textarea', 'Enter');
    assert.match(await page.textContent('.composer .note'), /Type a message first/);
  } finally {
    readOnly.kill('SIGTERM');
    await page.goto(`${base}/`);
  }
});

test('Fork here opens the fork, which names the trace it came from', async () => {
  await openTrace(demoId);
  await page.waitForSelector('.dag button.fork[data-fork-goal="2"]');
  await page.click('.dag button.fork[data-fork-goal="2"]');
  await waitFor('the fork', async () => page.evaluate((original) => !!window.__viewer && window.__viewer.model.traceId !== original, demoId));
  const forkId = await page.evaluate(() => window.__viewer.model.traceId);
  const { trace } = await getJson(`/api/traces/${encodeURIComponent(forkId)}`);
  assert.equal(trace.forked_from.trace_id, demoId);
  await waitFor('the fork header', async () => (await page.locator('.trace-head .forked a').count()) === 1);
  assert.equal(await page.textContent('.trace-head .forked a'), demoId);
  assert.equal(await page.getAttribute('.trace-head .forked a', 'href'), `#/traces/${encodeURIComponent(demoId)}`);
  assert.match(await page.textContent('.trace-head .forked'), /at goal 2\b/);
  // Goal 2 is pending again in the fork.
  await waitFor('goal 2 pending', async () => /st-pending/.test(await page.getAttribute('.dag .seq.root > .step[data-goal-id="2"]', 'class') ?? ''));
});

test('a plan is changed on the page, then run as changed', async () => {
  const { trace_id: id } = await getJson('/api/plans', {
    method: 'POST', headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ task: 'Viewer plan test: write a note' }),
  });
  const tree = async () => (await getJson(`/api/traces/${encodeURIComponent(id)}`)).goal_tree;
  await waitFor('the plan', async () => (await getJson(`/api/traces/${encodeURIComponent(id)}`)).trace.status === 'planned', 20000);
  const idOf = (goals, description) => goals.find((g) => g.description === description)?.id;
  const planned = (await tree()).goals;
  const gather = idOf(planned, 'Gather the facts');
  const write = idOf(planned, 'Write a draft');
  const polish = idOf(planned, 'Polish it');
  await openTrace(id);
  await page.waitForSelector('.plan-bar button.run');
  const desc = (goalId) => `.dag [data-goal-id="${goalId}"] .desc`;

  // Reword: click the text, type, Enter; the page shows it when the event arrives.
  await page.click(`${desc(gather)}.editable`);
  await page.fill('.dag .plan-input', 'Gather the facts carefully');
  await page.press('.dag .plan-input', 'Enter');
  await waitFor('the new wording', async () => (await page.textContent(desc(gather))) === 'Gather the facts carefully');

  // A check on it: a command that must exit 0 before the goal is done, shown beside it.
  await page.click(`.plan-tools[data-goal-id="${gather}"] [data-plan-tool="⚑"]`);
  await page.fill('.dag .plan-input', 'test -d .');
  await page.press('.dag .plan-input', 'Enter');
  const badge = (state) => `.dag [data-goal-id="${gather}"] .check-badge[data-check="${state}"]`;
  await waitFor('the check beside the goal', async () => (await page.locator(badge('unchecked')).count()) === 1);

  // A sub-goal under "Write a draft", shown open under it.
  await page.click(`.plan-tools[data-goal-id="${write}"] [data-plan-tool="+sub"]`);
  await page.fill('.dag .plan-input', 'Outline the draft');
  await page.press('.dag .plan-input', 'Enter');
  await waitFor('the sub-goal', async () => (await page.locator(`.dag .group[data-goal-id="${write}"] .desc`, { hasText: 'Outline the draft' }).count()) === 1);

  // Delete "Polish it".
  await page.click(`.plan-tools[data-goal-id="${polish}"] [data-plan-tool="✕"]`);
  await waitFor('the deleted goal gone', async () => (await page.locator(`.dag [data-goal-id="${polish}"]`).count()) === 0);
  await waitFor('the note on the deletion', async () => /Delete: done/.test(await page.textContent('.plan-bar .note')));
  assert.doesNotMatch(await page.textContent('.plan-bar'), /null|undefined/);

  // A started goal has no tools; the planning goal is finished.
  assert.equal(await page.locator(`.plan-tools[data-goal-id="${planned[0].id}"]`).count(), 0);
  const edited = (await tree()).goals.map((g) => [g.description, g.parent_id === write]);
  assert.deepEqual(edited, [['Plan the task', false], ['Gather the facts carefully', false], ['Write a draft', false], ['Outline the draft', true]]);
  await page.mouse.move(0, 0);
  await page.screenshot({ path: join(shots, 'viewer-plan.png') });

  // Run: the plan bar goes, and the run carries out the plan as it was left.
  await page.click('.plan-bar button.run');
  await waitFor('the run to complete', async () => (await page.locator('.dag .seq.root > .end.st-completed').count()) === 1, 20000);
  assert.equal(await page.locator('.plan-bar').isHidden(), true);
  const done = (await tree()).goals.map((g) => [g.description, g.status]);
  assert.deepEqual(done, [
    ['Plan the task', 'completed'], ['Gather the facts carefully', 'completed'],
    ['Write a draft', 'completed'], ['Outline the draft', 'completed'],
  ]);
  await waitFor('every goal drawn completed', async () => (await page.locator('.dag .step.st-pending, .dag .group.st-pending').count()) === 0);
  // The check ran when the model marked the goal done, and passed.
  const checked = (await tree()).goals.find((g) => g.id === gather);
  assert.deepEqual([checked.check, checked.check_result.passed], [{ command: 'test -d .', set_by: 'person' }, true]);
  await waitFor('the check passed beside the goal', async () => (await page.locator(badge('passed')).count()) === 1);
});

test('Rewind here puts the files back as the goal started and opens the fork', async () => {
  const { trace_id: id } = await getJson('/api/traces', {
    method: 'POST', headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ task: 'Viewer rewind test: write a draft' }),
  });
  const url = `/api/traces/${encodeURIComponent(id)}`;
  // The write waits for approval (the server's mode is `ask`): approve it over the API.
  const pending = await waitFor('the write to wait', async () => (await getJson(url)).pending_approvals[0], 20000);
  await getJson(`${url}/approvals/${encodeURIComponent(pending.tool_call_id)}`, {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ approve: true }),
  });
  await waitFor('the run to complete', async () => (await getJson(url)).trace.status === 'completed', 20000);
  const draft = join(work, 'workspace', 'draft.md');
  assert.ok(existsSync(draft), 'the approved write ran');
  await openTrace(id);
  await page.waitForSelector('.dag button.rewind[data-rewind-goal="2"]');
  assert.equal(await page.locator('.dag button.fork[data-fork-goal="2"]').count(), 1, 'beside Fork here');
  // "Diff" beside it: goal 2's changes under the goal, the added line green; goal 1 changed
  // nothing, and says so; a second click hides the diff.
  await page.click('.dag button.diff[data-diff-goal="2"]');
  const diff2 = await page.waitForSelector('.dag .goal-diff pre');
  const text2 = await diff2.textContent();
  assert.match(text2, /\+\+\+ b\/draft\.md/);
  const added = page.locator('.dag .goal-diff .dl.add', { hasText: '+A draft.' });
  assert.equal(await added.count(), 1, text2);
  assert.equal(await added.evaluate((el) => getComputedStyle(el).color), 'rgb(17, 99, 41)');
  const server2 = await getJson(`${url}/goals/2/diff`);
  assert.equal(text2.replace(/\n/g, ''), server2.diff.replace(/\n/g, ''), 'the page shows the API\'s diff');
  await page.click('.dag button.diff[data-diff-goal="1"]');
  await waitFor('goal 1 says nothing changed', async () => /No file changed in this goal\./.test(await page.textContent('.dag .goal-diff[data-goal-id="1"]')));
  await page.click('.dag button.diff[data-diff-goal="2"]');
  await page.click('.dag button.diff[data-diff-goal="1"]');
  await waitFor('the diffs hidden', async () => (await page.locator('.dag .goal-diff').count()) === 0);
  // The page says what would change and asks first.
  let asked = '';
  page.once('dialog', (dialog) => { asked = dialog.message(); dialog.accept(); });
  await page.click('.dag button.rewind[data-rewind-goal="2"]');
  await waitFor('the fork', async () => page.evaluate((original) => !!window.__viewer && window.__viewer.model.traceId !== original, id));
  assert.match(asked, /goal 2/);
  assert.match(asked, /1 deleted \(draft\.md\)/);
  assert.ok(!existsSync(draft), 'draft.md is gone, as before goal 2 started');
  const forkId = await page.evaluate(() => window.__viewer.model.traceId);
  const { trace } = await getJson(`/api/traces/${encodeURIComponent(forkId)}`);
  assert.equal(trace.forked_from.trace_id, id);
  await waitFor('goal 2 pending in the fork', async () => /st-pending/.test(await page.getAttribute('.dag .seq.root > .step[data-goal-id="2"]', 'class') ?? ''));
});

test("an MCP server's question is answered with the page's form, and the tool result carries the answer", async () => {
  // A served run whose MCP server (the SDK's stdio server tests/mcp/asking.mjs) asks the person
  // for a name and a colour during its tool call.
  const asking = join(root, 'tests', 'mcp', 'asking.mjs');
  assert.ok(existsSync(join(root, 'tests', 'mcp', 'node_modules', '@modelcontextprotocol', 'sdk')),
    'the MCP test servers are not installed: run scripts/setup-mcp.sh (cargo xtask setup)');
  const project = join(work, 'asking');
  mkdirSync(project, { recursive: true });
  writeFileSync(join(project, 'agent.toml'), `[mcp.servers.asking]\ncommand = "node"\nargs = [${JSON.stringify(asking)}]\n`);
  writeFileSync(join(project, 'script.json'), JSON.stringify({
    turns: [{ tool_calls: [{ name: 'mcp__asking__greet', arguments: {} }] }, { text: 'Greeted.' }],
    fallback: 'Done.',
  }));
  const port = await freePort();
  const served = spawn(AGENT, [
    'serve', '--port', String(port), '--trace-dir', join(project, 'traces'),
    '--provider', 'scripted', '--script', join(project, 'script.json'), '--workspace', join(work, 'workspace'),
  ], { cwd: project, env: { ...process.env, HOME: project, XDG_CONFIG_HOME: project }, stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  served.stdout.on('data', (d) => { log += d; });
  served.stderr.on('data', (d) => { log += d; });
  const other = `http://127.0.0.1:${port}`;
  try {
    await waitFor('the asking server', async () => (await fetch(`${other}/api/traces`)).ok);
    const response = await fetch(`${other}/api/traces`, {
      method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ task: 'Greet me' }),
    });
    const { trace_id: id } = await response.json();
    assert.ok(response.ok, `${response.status}: ${log}`);
    await page.goto(`${other}/#/traces/${encodeURIComponent(id)}`);
    // The question shows as a form: the server's message, a text field and a choice.
    const form = await page.waitForSelector('.elicitation[data-elicitation-id]', { timeout: 30000 })
      .catch((e) => { throw new Error(`${e}\nserver log:\n${log}`); });
    assert.match(await form.textContent(), /asking/);
    assert.match(await form.textContent(), /Who is there\?/);
    const chosen = await page.$eval('.elicitation select[name="colour"]', (el) => el.selectedOptions[0].textContent);
    assert.equal(chosen, 'green', 'the default is chosen');
    // Accepting without the required name is refused by the server, and the form says why.
    await page.click('.elicitation button.approve');
    await waitFor('the refusal on the form', async () => /name/.test(await page.textContent('.elicitation .err:not([hidden])').catch(() => '')));
    await page.fill('.elicitation input[name="name"]', 'Ada');
    await page.selectOption('.elicitation select[name="colour"]', { label: 'blue' });
    await page.click('.elicitation button.approve');
    await waitFor('the form gone', async () => (await page.locator('.elicitation').count()) === 0);
    await waitFor('the run to end', async () => (await (await fetch(`${other}/api/traces/${encodeURIComponent(id)}`)).json()).trace.status === 'completed', 30000);
    const { messages } = await (await fetch(`${other}/api/traces/${encodeURIComponent(id)}/messages`)).json();
    const result = messages.find((m) => m.role === 'tool');
    assert.match(result.content, /Hello Ada, who likes blue\./, log);
  } finally {
    served.kill('SIGTERM');
    await page.goto(`${base}/`);
  }
});

test('no errors on the page', () => {
  assert.deepEqual(pageErrors, [], 'errors on the page');
});
