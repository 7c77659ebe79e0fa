// The trace viewer: the list of traces and one trace as a DAG of its goals, live over the
// watch WebSocket. Plain ES module, no dependencies, no build step.
//
// Routes (in the URL fragment): `#/` the list, `#/traces/<id>` one trace.
//
// A trace that is not running can have its plan changed from the page (the plan bar, and the
// tools of each pending goal); every change goes through the plan routes of the API, and the
// page shows it when its events arrive on the watch, like any other change.
//
// Safety: every text from a trace (tasks, goals, messages, tool output) is put into the page as
// text nodes (`textContent`), never parsed as HTML.
//
// The DAG (seed 001): nodes are goal outcomes, edges the work that led to them. A collapsed
// edge carries the goal's cumulative statistics; expanding it replaces the goal by its sub-goals
// and shows the goal's own work (self statistics) on the group's header. An `explore_start`
// goal is followed by one lane per branch (sub-trace), which expands into the branch's own
// goals, loaded and watched from the sub-trace.

const TOKEN = new URLSearchParams(location.search).get('token');
const LIST_POLL_MS = 3000;
const FOLD_CHARS = 1200;
const FOLD_LINES = 16;

// ---------------------------------------------------------------------------------------------
// DOM helpers

/** Creates an element. `props`: `class`, `text`, `on*` handlers, other keys as attributes.
 * Children: nodes, strings (as text), arrays; null/false/undefined are skipped. */
function h(tag, props, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === 'class') el.className = value;
    else if (key === 'text') el.textContent = value;
    else if (key.startsWith('on')) el.addEventListener(key.slice(2), value);
    else el.setAttribute(key, value === true ? '' : String(value));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else if (child instanceof Node) el.appendChild(child);
    else el.appendChild(document.createTextNode(String(child)));
  }
}

// ---------------------------------------------------------------------------------------------
// API

function authHeaders(extra) {
  const headers = { ...(extra || {}) };
  if (TOKEN) headers.Authorization = `Bearer ${TOKEN}`;
  return headers;
}

/** Calls the API: GET, or POST with a JSON `body`, or `method` (PATCH, DELETE …); throws an
 * Error with the API's message on failure, its HTTP `status` and the API's error `code`
 * attached. */
async function api(path, options = {}) {
  const init = { headers: authHeaders(options.body ? { 'Content-Type': 'application/json' } : {}) };
  if (options.body) {
    init.method = 'POST';
    init.body = JSON.stringify(options.body);
  }
  if (options.method) init.method = options.method;
  const response = await fetch(path, init);
  const text = await response.text();
  let json = null;
  try { json = text ? JSON.parse(text) : null; } catch { /* not JSON */ }
  if (!response.ok) {
    const message = json && json.error ? json.error.message : `${response.status} ${response.statusText}`;
    const error = new Error(message);
    error.status = response.status;
    error.code = json && json.error ? json.error.code : null;
    throw error;
  }
  return json;
}

const enc = encodeURIComponent;

/** What to say when a message was refused, from the API's error. */
function sendError(error) {
  if (error.code === 'runs_unavailable') return `Not sent: runs cannot be started on this server (${error.message}). Your message is still in the box.`;
  if (error.code === 'run_in_progress') return `Not sent: the run is starting or ending (${error.message}); send it again in a moment.`;
  return `Not sent: ${error.message}. Your message is still in the box.`;
}

function watchUrl(traceId, since) {
  const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
  let url = `${scheme}//${location.host}/api/traces/${enc(traceId)}/watch?since_event_id=${since}`;
  if (TOKEN) url += `&token=${enc(TOKEN)}`;
  return url;
}

// ---------------------------------------------------------------------------------------------
// Formatting

function fmtInt(n) {
  return (n || 0).toLocaleString('en-US');
}

/** A token count; `~` before it when it is the runtime's estimate (the server reported none). */
function fmtTokens(n, estimated = false) {
  n = n || 0;
  const mark = estimated ? '~' : '';
  if (n >= 1e6) return `${mark}${(n / 1e6).toFixed(1)}M tok`;
  if (n >= 1e4) return `${mark}${Math.round(n / 1e3)}k tok`;
  if (n >= 1e3) return `${mark}${(n / 1e3).toFixed(1)}k tok`;
  return `${mark}${n} tok`;
}

const ESTIMATED_TITLE = 'Estimated: the model server reported no token counts';

/** A token count as a span, marked and explained when it is estimated. */
function tokensSpan(n, estimated, cls) {
  const attrs = {};
  if (cls) attrs.class = cls;
  if (estimated) {
    attrs.class = `${cls ? `${cls} ` : ''}estimated`;
    attrs.title = ESTIMATED_TITLE;
  }
  return h('span', attrs, fmtTokens(n, estimated));
}

function fmtCost(c) {
  c = c || 0;
  if (c === 0) return '$0';
  if (c < 0.01) return `$${c.toFixed(4)}`;
  return `$${c.toFixed(2)}`;
}

function fmtStats(stats, unit = 'msg') {
  const s = stats || {};
  const count = s.message_count || 0;
  return `${fmtInt(count)} ${unit}${count === 1 ? '' : 's'} · ${fmtTokens(s.total_tokens)} · ${fmtCost(s.total_cost)}`;
}

function fmtAge(iso) {
  const then = Date.parse(iso);
  if (Number.isNaN(then)) return '';
  const s = Math.max(0, Math.round((Date.now() - then) / 1000));
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
  return `${Math.floor(s / 86400)} d ago`;
}

function oneLine(text, max) {
  const line = String(text || '').replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** Markdown headings and rules dropped, for one-line previews. */
function plain(text) {
  return String(text || '').replace(/^#+\s*/gm, '').replace(/^-{3,}$/gm, '');
}

/** The icon of each status. Every one is a character of DejaVu Sans, regular and bold
 * (Debian's default font, often the only one), so none renders as an empty box: ⏸ (U+23F8),
 * the usual pause sign, is in no DejaVu font; ‖ (U+2016) is. The browser test checks them. */
const STATUS_ICON = {
  pending: '○', in_progress: '◐', completed: '✓', abandoned: '✕',
  running: '◐', waiting: '‖', failed: '✕', cancelled: '⊘', planned: '○',
  // The run stopped with goals of its plan still open.
  incomplete: '◔',
  // Stored as running, but the process that ran it is gone (the API's `interrupted`).
  interrupted: '‖',
};
const OTHER_STATUS_ICON = '•';

function statusChip(status) {
  return h('span', { class: `chip st-${status}` }, `${STATUS_ICON[status] || OTHER_STATUS_ICON} ${String(status).replace('_', ' ')}`);
}

// ---------------------------------------------------------------------------------------------
// The goal tree as the viewer needs it

/** A trace's state: the trace, its goal tree and sub-traces, kept current by watch events. */
class TraceModel {
  constructor(traceId) {
    this.traceId = traceId;
    this.trace = null;
    this.mission = '';
    this.currentId = null;
    this.goals = new Map();
    this.subTraces = new Map();
    this.pendingApprovals = [];
    /** What the run told as it went (`notice` and `compaction_failed` events), by event id. */
    this.notices = new Map();
    /** The background shells the trace's tool messages tell of (`metadata.shells`), by id: the
     * newest status of each. */
    this.shells = new Map();
    /** What each background shell printed, kept on the message that started it once its run
     * ended (`metadata.shell_logs`), by id. */
    this.shellLogs = new Map();
  }

  /** Keeps the statuses of background shells a message carries. */
  addShells(message) {
    const list = message?.metadata?.shells;
    if (!Array.isArray(list)) return;
    for (const shell of list) if (shell && typeof shell.id === 'string') this.shells.set(shell.id, shell);
    const logs = message.metadata.shell_logs;
    if (logs && typeof logs === 'object') {
      for (const [id, text] of Object.entries(logs)) if (typeof text === 'string') this.shellLogs.set(id, text);
    }
  }

  /** Keeps a `notice` or `compaction_failed` event for the header. */
  addNotice(event) {
    const text = event.event === 'notice' ? event.message : `compaction failed: ${event.reason}`;
    const kind = event.event === 'notice' ? event.kind : 'compaction_failed';
    if (typeof text === 'string') this.notices.set(event.event_id, { kind, text });
  }

  setTree(tree) {
    this.mission = tree.mission || '';
    this.currentId = tree.current_id ?? null;
    this.goals = new Map((tree.goals || []).map((g) => [g.id, g]));
  }

  /** Takes sub-traces from a read, keeping what a newer event already said. */
  setSubTraces(list) {
    const ended = (t) => ['completed', 'failed', 'cancelled'].includes(t?.status);
    for (const t of list || []) {
      const mine = this.subTraces.get(t.trace_id);
      if (mine && ((mine.updated_at && mine.updated_at > t.updated_at) || (ended(mine) && !ended(t)))) continue;
      this.subTraces.set(t.trace_id, t);
    }
  }

  /** Applies one event to the goal tree. Every event carries absolute values, so applying one
   * whose effect the tree already has changes nothing. */
  applyToTree(event) {
    switch (event.event) {
      case 'trace_created':
        this.trace = event.trace;
        if (this.goals.size === 0 && event.goal_tree) this.setTree(event.goal_tree);
        break;
      case 'trace_updated':
        this.trace = { ...this.trace, ...event.trace };
        if ('current_goal_id' in event.trace) this.currentId = event.trace.current_goal_id;
        break;
      case 'goal_tree_updated':
        this.setTree(event.goal_tree);
        break;
      case 'goal_added':
        this.goals.set(event.goal.id, event.goal);
        break;
      case 'goal_updated': {
        const goal = this.goals.get(event.goal_id);
        if (goal) Object.assign(goal, event.updates || {});
        this.applyAffected(event.affected_goals);
        break;
      }
      case 'goal_removed':
        this.goals.delete(event.goal_id);
        break;
      case 'message_added':
        this.applyAffected(event.affected_goals);
        break;
      case 'sub_trace_started':
        if (!this.subTraces.has(event.trace_id)) {
          this.subTraces.set(event.trace_id, {
            trace_id: event.trace_id, parent_goal_id: event.parent_goal_id,
            agent_type: event.agent_type, task: event.task, status: 'running',
            total_messages: 0, total_tokens: 0, total_cost: 0,
          });
        }
        break;
      case 'sub_trace_completed': {
        const sub = this.subTraces.get(event.trace_id);
        if (sub) {
          Object.assign(sub, { status: event.status, summary: event.summary });
          Object.assign(sub, event.stats || {});
        }
        break;
      }
      case 'trace_completed':
        if (this.trace) {
          this.trace = { ...this.trace, ...(event.stats || {}) };
          if (event.status) this.trace.status = event.status;
        }
        break;
      default:
        break;
    }
  }

  applyAffected(list) {
    for (const a of list || []) {
      const goal = this.goals.get(a.goal_id);
      if (!goal) continue;
      if (a.self_stats) goal.self_stats = a.self_stats;
      if (a.cumulative_stats) goal.cumulative_stats = a.cumulative_stats;
      if (a.status) goal.status = a.status;
      if (a.summary !== undefined && a.summary !== null) goal.summary = a.summary;
    }
  }

  /** The goals under `parentId` in plan order: the tree's list order, which a person's move
   * changes (ids stay as they were). */
  children(parentId) {
    const list = [];
    for (const g of this.goals.values()) if ((g.parent_id ?? null) === parentId) list.push(g);
    return list;
  }

  /** Display numbers (1, 2, 2.1 …) of the goals that are not abandoned, as in the plan text. */
  numbers() {
    const numbers = new Map();
    const walk = (parentId, prefix) => {
      let n = 0;
      for (const g of this.children(parentId)) {
        if (g.status === 'abandoned') continue;
        n += 1;
        const num = prefix ? `${prefix}.${n}` : String(n);
        numbers.set(g.id, num);
        walk(g.id, num);
      }
      // Abandoned goals keep their children's numbers out of the plan too.
    };
    walk(null, '');
    return numbers;
  }

  /** The goal and all its descendants, in creation order. */
  subtree(goalId) {
    const out = [];
    const walk = (id) => {
      const g = this.goals.get(id);
      if (!g) return;
      out.push(g);
      for (const c of this.children(id)) walk(c.id);
    };
    walk(goalId);
    return out;
  }

  /** True when `goalId` is the current goal or one of its ancestors. */
  holdsCurrent(goalId) {
    let id = this.currentId;
    for (let guard = 0; id && guard < 1000; guard += 1) {
      if (id === goalId) return true;
      id = this.goals.get(id)?.parent_id ?? null;
    }
    return false;
  }

  /** Sub-traces spawned by an explore_start goal: its branch_ids first, then any sub-trace
   * started from it that the goal does not list yet (a run in progress). */
  branchesOf(goal) {
    const ids = [...(goal.branch_ids || [])];
    for (const t of this.subTraces.values()) {
      if (t.parent_goal_id === goal.id && t.agent_type === 'explore' && !ids.includes(t.trace_id)) ids.push(t.trace_id);
    }
    return ids;
  }
}

// ---------------------------------------------------------------------------------------------
// The live connection

/** Follows a trace's watch: `connected`, then each event once, in order; reconnects after a
 * drop with `since_event_id` = the last event seen, so nothing is missed or applied twice. */
class Watch {
  constructor(traceId, handlers) {
    this.traceId = traceId;
    this.handlers = handlers;
    this.lastEventId = 0;
    this.currentAtConnect = 0;
    this.connects = 0;
    this.appliedIds = [];
    this.socket = null;
    this.stopped = false;
    this.retryMs = 500;
    this.state = 'connecting';
  }

  start() {
    this.open();
  }

  stop() {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    if (this.socket) this.socket.close(1000, 'viewer closed');
  }

  /** Closes the socket as a network drop would (used by tests to prove the reconnect). */
  drop() {
    if (this.socket) this.socket.close(4000, 'dropped');
  }

  setState(state) {
    this.state = state;
    this.handlers.onState?.(state);
  }

  open() {
    const socket = new WebSocket(watchUrl(this.traceId, this.lastEventId));
    this.socket = socket;
    socket.onmessage = (message) => {
      let event;
      try { event = JSON.parse(message.data); } catch { return; }
      if (event.event === 'connected') {
        this.retryMs = 500;
        this.connects += 1;
        this.currentAtConnect = event.current_event_id || 0;
        this.setState('live');
        this.handlers.onConnected(event);
        return;
      }
      // Live-only pieces of a model answer being generated: no id, never replayed.
      if (event.event === 'text_delta' || event.event === 'reasoning_delta') {
        this.handlers.onDelta?.(event);
        return;
      }
      const id = event.event_id;
      // Exactly once: an id at or below the last one seen was applied already.
      if (typeof id !== 'number' || id <= this.lastEventId) return;
      this.lastEventId = id;
      this.appliedIds.push(id);
      this.handlers.onEvent(event, id > this.currentAtConnect);
    };
    socket.onclose = () => {
      if (this.socket !== socket) return;
      this.socket = null;
      if (this.stopped) return;
      this.setState('reconnecting');
      this.retryTimer = setTimeout(() => this.open(), this.retryMs);
      this.retryMs = Math.min(this.retryMs * 2, 10000);
    };
  }
}

// ---------------------------------------------------------------------------------------------
// Views

const viewEl = () => document.getElementById('view');
let currentView = null;

function setCrumbs(...items) {
  const nav = document.getElementById('crumbs');
  nav.replaceChildren(...items.flatMap((item, i) => (i ? [h('span', { class: 'sep', 'aria-hidden': 'true' }, '›'), item] : [item])));
}

function setConn(text, cls) {
  const el = document.getElementById('conn');
  el.textContent = text;
  el.className = `conn ${cls || ''}`;
}

function route() {
  if (currentView) currentView.stop();
  const hash = location.hash || '#/';
  const match = hash.match(/^#\/traces\/(.+)$/);
  currentView = match ? new TraceView(decodeURIComponent(match[1])) : new ListView();
  currentView.start();
}

/** Re-renders `root` with `build()`, keeping the keyboard focus on the element with the same
 * `data-key`. */
function rerender(root, build) {
  const focused = document.activeElement?.closest?.('[data-key]');
  const key = root.contains(focused) ? focused.dataset.key : null;
  root.replaceChildren(...[].concat(build()));
  if (key) {
    const again = root.querySelector(`[data-key="${CSS.escape(key)}"]`);
    if (again) again.focus({ preventScroll: true });
  }
}

// ----- the list -------------------------------------------------------------------------------

/** The trace list, polled every few seconds for status changes and new traces. */
class ListView {
  start() {
    document.title = 'agent traces';
    setCrumbs(h('span', {}, 'Traces'));
    setConn('', '');
    this.table = h('div', { class: 'list-wrap' }, h('p', { class: 'muted' }, 'Loading…'));
    viewEl().replaceChildren(h('h1', { class: 'sr-only' }, 'Traces'), this.table);
    this.stopped = false;
    this.poll();
  }

  stop() {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  async poll() {
    if (this.stopped) return;
    if (!document.hidden) {
      try {
        const { traces, interrupted } = await api('/api/traces?limit=500');
        if (this.stopped) return;
        this.interrupted = new Set(interrupted || []);
        rerender(this.table, () => this.render(traces));
        setConn(`updated ${new Date().toLocaleTimeString()}`, 'ok');
      } catch (error) {
        setConn(`cannot load: ${error.message}`, 'bad');
      }
    }
    this.timer = setTimeout(() => this.poll(), LIST_POLL_MS);
  }

  render(traces) {
    if (!traces.length) {
      return h('p', { class: 'muted' }, 'No traces yet. Run ', h('code', {}, 'agent demo'), ' or ', h('code', {}, 'agent run "<task>"'), '.');
    }
    const ids = new Set(traces.map((t) => t.trace_id));
    const children = new Map();
    const roots = [];
    for (const t of traces) {
      if (t.parent_trace_id && ids.has(t.parent_trace_id)) {
        if (!children.has(t.parent_trace_id)) children.set(t.parent_trace_id, []);
        children.get(t.parent_trace_id).push(t);
      } else {
        roots.push(t);
      }
    }
    const rows = [];
    const add = (t, depth) => {
      rows.push(this.row(t, depth));
      const subs = (children.get(t.trace_id) || []).slice().sort((a, b) => a.created_at.localeCompare(b.created_at));
      for (const s of subs) add(s, depth + 1);
    };
    for (const t of roots) add(t, 0);
    return h('table', { class: 'traces' },
      h('caption', { class: 'sr-only' }, 'Traces, newest first; sub-traces under their parent'),
      h('thead', {}, h('tr', {},
        h('th', { scope: 'col' }, 'Status'), h('th', { scope: 'col' }, 'Task'),
        h('th', { scope: 'col', class: 'n' }, 'Messages'), h('th', { scope: 'col', class: 'n' }, 'Tokens'),
        h('th', { scope: 'col', class: 'n' }, 'Cost'), h('th', { scope: 'col' }, 'Model'),
        h('th', { scope: 'col' }, 'Started'))),
      h('tbody', {}, rows));
  }

  row(t, depth) {
    const kind = t.agent_type ? h('span', { class: 'kind' }, t.agent_type) : null;
    const shown = this.interrupted?.has(t.trace_id) ? 'interrupted' : t.status;
    return h('tr', { class: depth ? 'sub' : '', 'data-trace-id': t.trace_id, 'data-status': shown },
      h('td', {}, statusChip(shown)),
      h('td', { class: `task depth-${Math.min(depth, 4)}` },
        depth ? h('span', { class: 'branch-mark', 'aria-hidden': 'true' }, '└ ') : null,
        kind,
        h('a', { href: `#/traces/${enc(t.trace_id)}`, 'data-key': `trace:${t.trace_id}`, title: t.task }, oneLine(t.task, 110)),
        t.error ? h('div', { class: 'err small' }, oneLine(t.error, 160)) : null),
      h('td', { class: 'n' }, fmtInt(t.total_messages)),
      h('td', { class: 'n' }, fmtTokens(t.total_tokens)),
      h('td', { class: 'n' }, fmtCost(t.total_cost)),
      h('td', { class: 'small model' }, t.model || ''),
      h('td', { class: 'small age', title: t.created_at }, fmtAge(t.created_at)));
  }
}

// ----- one trace ------------------------------------------------------------------------------

/** The form of one question (`q`, as `GET /api/traces/{id}/elicitations` lists it); `send`
 * posts an answer body and throws with the server's message when it is refused. */
function elicitationForm(q, send) {
  const schema = q.requested_schema || {};
  const required = new Set(schema.required || []);
  const fields = Object.entries(schema.properties || {}).map(([name, p]) => {
    const label = p.title || name;
    const choices = p.enum ? p.enum.map((v, i) => [v, (p.enumNames || [])[i] || String(v)])
      : (p.oneOf || p.anyOf || []).filter((c) => 'const' in c).map((c) => [c.const, c.title || String(c.const)]);
    let input;
    let read;
    if (choices.length) {
      input = h('select', { name, 'aria-label': label },
        required.has(name) ? null : h('option', { value: '' }, '—'),
        ...choices.map(([v, text], i) => h('option', { value: String(i), selected: v === p.default }, text)));
      read = () => (input.value === '' ? undefined : choices[Number(input.value)][0]);
    } else if (p.type === 'boolean') {
      input = h('input', { type: 'checkbox', name, 'aria-label': label, checked: p.default === true });
      read = () => input.checked;
    } else if (p.type === 'number' || p.type === 'integer') {
      input = h('input', { type: 'number', name, 'aria-label': label, step: p.type === 'integer' ? '1' : 'any', min: p.minimum, max: p.maximum, value: p.default });
      read = () => (input.value === '' ? undefined : Number(input.value));
    } else {
      const type = { email: 'email', uri: 'url', date: 'date', 'date-time': 'datetime-local' }[p.format] || 'text';
      input = h('input', { type, name, 'aria-label': label, value: p.default, required: required.has(name) });
      read = () => (input.value === '' ? undefined : input.value);
    }
    const row = h('label', { class: 'field' }, h('span', {}, label, required.has(name) ? ' *' : ''), input,
      p.description ? h('span', { class: 'small muted' }, ` ${p.description}`) : null);
    return { name, row, read };
  });
  const error = h('p', { class: 'err small', hidden: true });
  const answer = async (body, button) => {
    button.disabled = true;
    try {
      await send(body);
    } catch (e) {
      error.textContent = e.message;
      error.hidden = false;
      button.disabled = false;
    }
  };
  const accept = (button) => {
    const content = {};
    for (const f of fields) {
      const value = f.read();
      if (value !== undefined) content[f.name] = value;
    }
    answer(q.mode === 'url' ? { action: 'accept' } : { action: 'accept', content }, button);
  };
  return h('div', { class: 'approval elicitation', 'data-elicitation-id': q.id },
    h('div', {}, h('strong', {}, q.server), h('span', { class: 'small muted' }, ` asked ${fmtAge(q.requested_at)}`)),
    h('p', {}, q.message),
    q.mode === 'url' ? h('p', {}, h('a', { href: q.url, target: '_blank', rel: 'noopener noreferrer' }, q.url)) : null,
    ...fields.map((f) => f.row),
    error,
    h('div', { class: 'approval-actions' },
      h('button', { class: 'approve', type: 'button', onclick: (e) => accept(e.currentTarget) }, q.mode === 'url' ? 'Done' : 'Accept'),
      h('button', { class: 'reject', type: 'button', onclick: (e) => answer({ action: 'decline' }, e.currentTarget) }, 'Decline')));
}

/** One trace: header, pending approvals, the DAG and the messages panel, live. */
class TraceView {
  constructor(traceId) {
    this.traceId = traceId;
    this.model = new TraceModel(traceId);
    this.expanded = new Set(); // keys `<trace_id>#<goal_id>` of expanded goals
    this.collapsed = new Set(); // keys of pending goals collapsed in an editable plan
    this.editing = null; // { kind, goalId, text } of the plan edit being typed
    this.planNoteState = null; // { text, kind } of the last plan change
    this.lanes = new Map(); // sub-trace id → { model, watch } of expanded lanes
    this.panel = null; // { traceId, goalIds, title, ... } of the open messages panel
    this.typing = new Map(); // trace id → { goalId, text } of the answer being streamed
    this.diffs = new Map(); // `<trace_id>#<goal_id>` → { loading } | { diff, to } | { error } of the diffs shown
    this.frame = 0;
  }

  start() {
    setCrumbs(h('a', { href: '#/' }, 'Traces'), h('span', { class: 'crumb-id' }, this.traceId));
    this.headerEl = h('section', { class: 'trace-head', 'aria-label': 'Trace' }, h('p', { class: 'muted' }, 'Loading…'));
    this.approvalsEl = h('section', { class: 'approvals', 'aria-label': 'Pending approvals', 'aria-live': 'polite' });
    this.elicitationsEl = h('section', { class: 'approvals elicitations', 'aria-label': 'Questions from MCP servers', 'aria-live': 'polite' });
    this.dagEl = h('div', { class: 'dag', role: 'region', 'aria-label': 'Goal graph: nodes are goal outcomes, edges the work that led to them', onkeydown: (e) => this.onKey(e) });
    this.panelEl = h('aside', { class: 'panel', hidden: true, 'aria-label': 'Messages' });
    this.typingEl = h('p', { class: 'typing small', hidden: true, 'aria-label': 'The model is writing' });
    this.composer = this.buildComposer();
    this.planBarEl = h('section', { class: 'plan-bar', hidden: true, 'aria-label': 'Plan' });
    const keys = h('p', { class: 'small muted keys' },
      'Edges are the work, nodes the outcome of each goal. Keys: ↑ ↓ move · Enter opens the messages · → ← expand and collapse · Esc closes.');
    viewEl().replaceChildren(
      this.headerEl, this.approvalsEl, this.elicitationsEl, this.planBarEl, this.composer.form, this.typingEl, keys,
      h('div', { class: 'split' }, h('div', { class: 'dag-wrap' }, this.dagEl), this.panelEl));
    this.watch = new Watch(this.traceId, {
      onConnected: (e) => this.onConnected(this.model, e),
      onEvent: (e, fresh) => this.onEvent(this.model, e, fresh),
      onDelta: (e) => this.onDelta(this.model, e),
      onState: (s) => setConn(s === 'live' ? '● live' : s === 'reconnecting' ? '○ reconnecting…' : s, s === 'live' ? 'ok' : 'warn'),
    });
    this.onEscape = (e) => { if (e.key === 'Escape' && this.panel) this.closePanel(); };
    document.addEventListener('keydown', this.onEscape);
    // Test hook: the state a browser test checks (event ids applied, the socket to drop, the
    // status icons).
    window.__viewer = { view: this, watch: this.watch, model: this.model, statusIcons: { ...STATUS_ICON, other: OTHER_STATUS_ICON } };
    this.refresh();
    this.watch.start();
  }

  stop() {
    this.stopped = true;
    document.removeEventListener('keydown', this.onEscape);
    this.watch.stop();
    for (const lane of this.lanes.values()) lane.watch.stop();
    clearTimeout(this.refreshTimer);
    clearTimeout(this.approvalTimer);
    clearTimeout(this.elicitationTimer);
    if (window.__viewer?.view === this) delete window.__viewer;
  }

  // --- data ---

  /** Reads the trace (header, totals, sub-traces, pending approvals), at most about once a
   * second. A request made while one is under way runs again after it, so the last answer is
   * never older than the last event. */
  refresh() {
    if (this.stopped) return;
    if (this.refreshTimer) {
      this.refreshAgain = true;
      return;
    }
    this.refreshTimer = setTimeout(async () => {
      try {
        const detail = await api(`/api/traces/${enc(this.traceId)}`);
        if (this.stopped) return;
        // A trace_updated event may have brought a newer trace while the request was out.
        const mine = this.model.trace;
        if (!mine || !(mine.updated_at > detail.trace.updated_at)) this.model.trace = detail.trace;
        this.model.setSubTraces(detail.sub_traces);
        this.model.pendingApprovals = detail.pending_approvals || [];
        this.model.pendingElicitations = detail.pending_elicitations || [];
        this.model.totalWithSubs = detail.total_stats_with_sub_traces || null;
        this.model.interrupted = Boolean(detail.interrupted);
        this.model.tokensEstimated = Boolean(detail.tokens_estimated);
        this.model.hasCheckpoints = Boolean(detail.checkpoints);
        if (this.model.goals.size === 0) this.model.setTree(detail.goal_tree);
        this.renderApprovals();
        this.renderElicitations();
        this.pollElicitations(detail.trace.status);
        this.schedule();
        // The run asks for approval just after it says it is waiting: look again shortly.
        if (detail.trace.status === 'waiting' && this.model.pendingApprovals.length === 0) {
          clearTimeout(this.approvalTimer);
          this.approvalTimer = setTimeout(() => this.refresh(), 400);
        }
      } catch (error) {
        this.headerEl.replaceChildren(h('p', { class: 'err' }, `Cannot load trace ${this.traceId}: ${error.message}`));
      } finally {
        this.refreshTimer = 0;
        if (this.refreshAgain) {
          this.refreshAgain = false;
          this.refresh();
        }
      }
    }, this.model.trace ? 700 : 0);
  }

  onConnected(model, event) {
    model.setTree(event.goal_tree);
    model.setSubTraces(event.sub_traces);
    this.schedule();
    if (model !== this.model) return;
    this.refresh();
    // A trace without goals has no edge to open: its messages are shown at once.
    if (model.goals.size === 0 && !this.shownUnplanned) {
      this.shownUnplanned = true;
      this.openConversation({ focus: false });
    }
  }

  /** One event of `model`'s trace. `fresh`: newer than the tree `connected` carried. */
  onEvent(model, event, fresh) {
    if (fresh) model.applyToTree(event);
    if (event.event === 'notice' || event.event === 'compaction_failed') model.addNotice(event);
    if (event.event === 'message_added' && event.message?.role === 'assistant') this.stopTyping(model.traceId);
    if (event.event === 'message_added' || event.event === 'message_updated') {
      model.addShells(event.message);
      this.panelMessage(model.traceId, event.message);
    }
    if (model === this.model && event.event === 'message_added') this.queuedArrived(event.message);
    // Totals, statuses, sub-traces and approvals are read again; the tree comes from events.
    if (model === this.model && !['goal_added', 'goal_updated', 'goal_removed', 'goal_tree_updated'].includes(event.event)) this.refresh();
    this.schedule();
  }

  /** A piece of the answer the model of `model`'s trace is writing: the typing line grows. */
  onDelta(model, event) {
    if (event.event !== 'text_delta' || typeof event.delta !== 'string') return;
    const typing = this.typing.get(model.traceId) || { goalId: event.goal_id || null, text: '' };
    typing.text += event.delta;
    this.typing.set(model.traceId, typing);
    if (model === this.model) {
      this.typingEl.hidden = false;
      this.typingEl.replaceChildren(h('span', { class: 'muted' }, 'Writing: '), h('span', { class: 'text' }, oneLine(typing.text.slice(-400), 400)));
    }
    if (this.panel && this.panel.traceId === model.traceId) this.renderPanelSoon();
  }

  /** The whole message of `traceId` arrived: its typing line gives way to it. */
  stopTyping(traceId) {
    if (!this.typing.delete(traceId)) return;
    if (traceId === this.traceId) {
      this.typingEl.hidden = true;
      this.typingEl.replaceChildren();
    }
    if (this.panel && this.panel.traceId === traceId) this.renderPanelSoon();
  }

  schedule() {
    if (this.frame || this.stopped) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.render();
    });
  }

  // --- rendering ---

  render() {
    const { trace } = this.model;
    if (trace) {
      document.title = `${oneLine(trace.task, 60)} · agent traces`;
      this.renderHeader(trace);
    }
    this.renderPlanBar();
    rerender(this.dagEl, () => this.renderDag(this.model));
    this.dagEl.dataset.lastEventId = String(this.watch.lastEventId);
    this.updateComposer();
    this.focusEditor();
  }

  renderHeader(t) {
    const parent = t.parent_trace_id
      ? h('p', { class: 'small' }, `${t.agent_type || 'sub'}-trace of `, h('a', { href: `#/traces/${enc(t.parent_trace_id)}` }, t.parent_trace_id), t.parent_goal_id ? ` (goal ${t.parent_goal_id})` : '')
      : null;
    const origin = t.forked_from;
    const forked = origin
      ? h('p', { class: 'small forked' }, 'Forked from ',
        h('a', { href: `#/traces/${enc(origin.trace_id)}`, class: 'forked-from' }, origin.trace_id),
        origin.goal_id ? ` at goal ${this.model.numbers().get(origin.goal_id) || origin.goal_id}, which is pending again here` : '',
        origin.message_sequence != null ? ` after message #${origin.message_sequence}` : '')
      : null;
    const wasOpen = this.headerEl.querySelector('details.summary')?.open;
    const outcome = t.error
      ? h('p', { class: 'err' }, t.error)
      : t.summary ? h('details', { class: 'summary', open: wasOpen }, h('summary', {}, 'Final answer'), h('div', { class: 'text' }, t.summary)) : null;
    // The totals of the trace with its sub-traces (what its max_cost budget counts), when they
    // add something to its own.
    const all = this.model.totalWithSubs;
    const withSubs = all && all.total_messages !== t.total_messages
      ? h('p', { class: 'totals with-subs' },
        h('span', {}, 'With sub-traces: '),
        h('span', {}, `${fmtInt(all.total_messages)} messages`), ' · ',
        tokensSpan(all.total_tokens, this.model.tokensEstimated), ' · ',
        h('span', {}, fmtCost(all.total_cost)))
      : null;
    this.headerEl.replaceChildren();
    append(this.headerEl, [
      h('div', { class: 'head-row' },
        statusChip(this.model.interrupted ? 'interrupted' : t.status),
        h('h1', { class: 'task' }, t.task)),
      this.model.interrupted
        ? h('p', { class: 'small interrupted' }, 'The process that ran this trace is gone; ',
          h('code', {}, `agent resume ${t.trace_id}`), ' continues it.')
        : t.status === 'incomplete'
          ? h('p', { class: 'small incomplete' }, 'The run stopped with goals of its plan left open; ',
            h('code', {}, `agent resume ${t.trace_id}`), ' takes them up.')
          : null,
      parent,
      h('p', { class: 'totals' },
        h('span', {}, `${fmtInt(t.total_messages)} messages`), ' · ',
        tokensSpan(t.total_tokens, this.model.tokensEstimated), ' · ',
        h('span', {}, fmtCost(t.total_cost)),
        t.model ? ` · ${t.model}` : '',
        ` · started ${fmtAge(t.created_at)}`,
        ` · ${this.model.goals.size} goal${this.model.goals.size === 1 ? '' : 's'} · `,
        h('button', { type: 'button', class: 'link all-messages', onclick: () => this.openConversation() }, 'all messages')),
      forked,
      withSubs,
      this.renderNotices(),
      this.renderShells(t),
      outcome]);
  }

  /** The background shells the run started: id, command, how each is (as the model last read
   * it, until the run's end records how each ended and what it printed). */
  renderShells(t) {
    const shells = [...this.model.shells.values()];
    if (shells.length === 0) return null;
    const live = ['running', 'waiting'].includes(t.status);
    const state = (s) => {
      if (s.state === 'running') return live ? 'running' : 'stopped with the run';
      if (s.state === 'exited') return `exited ${s.code}`;
      if (s.state === 'killed') return s.signal != null ? `killed (signal ${s.signal})` : 'killed';
      return s.state === 'failed' ? `failed: ${s.error}` : String(s.state);
    };
    const wasOpen = this.headerEl.querySelector('details.shells')?.open;
    return h('details', { class: 'shells small', open: wasOpen ?? true },
      h('summary', {}, `Background shells (${shells.length})`),
      h('ul', { 'aria-label': 'Background shells' }, shells.map((s) => h('li', { 'data-shell-id': s.id },
        h('code', {}, s.id), ' ', h('span', { class: `shell-state s-${s.state}` }, state(s)), ' ',
        h('code', { class: 'shell-command' }, s.command),
        h('span', { class: 'muted' }, ` · ${fmtInt(s.output_bytes || 0)} bytes printed`),
        this.model.shellLogs.has(s.id)
          ? foldable(this.model.shellLogs.get(s.id) || '(nothing)', 'output', `shell:${s.id}`)
          : null))));
  }

  /** What the run told as it went: the model's window, a server that hides the tools or their
   * results from the model, an empty answer, a compaction that failed. */
  renderNotices() {
    const notices = [...this.model.notices.values()];
    if (notices.length === 0) return null;
    return h('ul', { class: 'notices small', 'aria-label': 'Notices' },
      notices.map((n) => h('li', { class: `notice n-${n.kind}` }, `${n.kind === 'context_window' ? 'ⓘ' : '⚠'} ${n.text}`)));
  }

  // --- the message box ---

  /** The box under the header that sends a user message to the trace: a running trace gets it
   * queued for its next model call, an ended one continues with it under the same id. What is
   * typed stays until the API has taken it. */
  buildComposer() {
    const box = h('textarea', {
      class: 'message-input', rows: '2', 'aria-label': 'Message to the trace',
      placeholder: 'A message to the model: Enter sends, Shift+Enter starts a new line',
      onkeydown: (e) => {
        if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
          e.preventDefault();
          this.send();
        }
      },
    });
    const button = h('button', { type: 'submit', class: 'send' }, 'Send');
    const hint = h('p', { class: 'small muted hint' });
    const note = h('p', { class: 'small note', role: 'status', 'aria-live': 'polite', hidden: true });
    const form = h('form', {
      class: 'composer', 'aria-label': 'Send a message',
      onsubmit: (e) => { e.preventDefault(); this.send(); },
    }, h('div', { class: 'composer-row' }, box, button), hint, note);
    this.queuedTexts = [];
    return { form, box, button, hint, note };
  }

  /** Why the box takes no message now (null when it does), and what a message will do. */
  composerState() {
    const t = this.model.trace;
    if (!t) return { refused: 'Loading…', hint: '' };
    const running = t.status === 'running' || t.status === 'waiting';
    // The run of a branch is part of its main trace's run, which has no way to hand it a
    // message: the API would start a second run of the same trace.
    if (t.parent_trace_id && running) {
      return { refused: 'This sub-trace runs as part of its main trace and takes no message while it runs.', hint: '' };
    }
    if (running) return { refused: null, hint: 'The run is going on: a message is queued and the model reads it before its next call.' };
    if (t.parent_trace_id) return { refused: null, hint: 'A message continues this sub-trace on its own, under the same id; its main trace is not told.' };
    return { refused: null, hint: `The trace has ${t.status === 'completed' ? 'completed' : 'stopped'}: a message starts its next turn, under the same id, with its plan and history.` };
  }

  updateComposer() {
    const { box, button, hint } = this.composer;
    const state = this.composerState();
    box.disabled = Boolean(state.refused);
    button.disabled = Boolean(state.refused) || this.sending;
    hint.textContent = state.refused || state.hint;
  }

  /** Shows what became of the last message; `kind`: `ok`, `err` or nothing. */
  composerNote(text, kind) {
    const { note } = this.composer;
    note.hidden = !text;
    note.textContent = text || '';
    note.className = `small note ${kind || ''}`;
    note.setAttribute('role', kind === 'err' ? 'alert' : 'status');
  }

  /** Posts the typed message; the box is emptied only once the API took it. */
  async send() {
    const { box } = this.composer;
    if (this.sending || this.composerState().refused) return;
    const text = box.value;
    if (!text.trim()) {
      this.composerNote('Type a message first.', 'err');
      return;
    }
    this.sending = true;
    this.updateComposer();
    this.composerNote('Sending…');
    try {
      const answer = await api(`/api/traces/${enc(this.traceId)}/messages`, { body: { content: text } });
      if (this.stopped) return;
      // Text typed while the request was out is kept.
      if (box.value === text) box.value = '';
      if (answer.queued) {
        this.queuedTexts.push(text);
        this.composerNote('Queued: the run shows your message to the model before its next call.', 'ok');
      } else {
        this.composerNote('Sent: the next turn has started, and the page follows it.', 'ok');
      }
      this.openConversation({ focus: false });
    } catch (error) {
      if (this.stopped) return;
      this.composerNote(sendError(error), 'err');
    } finally {
      this.sending = false;
      this.updateComposer();
    }
  }

  /** A user message of the run: when it is one this page queued, say it reached the model. */
  queuedArrived(message) {
    if (!message || message.role !== 'user' || message.metadata?.turn !== 'queued') return;
    const i = this.queuedTexts.indexOf(message.content);
    if (i < 0) return;
    this.queuedTexts.splice(i, 1);
    this.composerNote(`Your queued message reached the model (message #${message.sequence}).`, 'ok');
  }

  /** The messages panel on every message of the trace, scrolled to the newest; it follows the
   * run. Left as it is when it shows them already. */
  openConversation({ focus = true } = {}) {
    const p = this.panel;
    if (p && p.wholeTrace && p.traceId === this.traceId) {
      const body = this.panelEl.querySelector('.panel-body');
      if (body) body.scrollTop = body.scrollHeight;
      return;
    }
    this.openPanel(this.model, null, 'All messages', { wholeTrace: true, newest: true, focus });
  }

  // --- the plan: changed by people while the trace is not running ---

  /** True when people may change this trace's plan: a main trace whose run is not going on. */
  planEditable() {
    const t = this.model.trace;
    return Boolean(t && !t.parent_trace_id && !['running', 'waiting'].includes(t.status) && !this.model.interrupted);
  }

  /** True for a goal of this trace's editable plan that never started: it can be reworded,
   * given an agent, moved or deleted. */
  goalEditable(model, goal) {
    return model === this.model && this.planEditable() && goal.status === 'pending' && (goal.type || 'normal') === 'normal';
  }

  /** The bar over the plan of a stored plan or a trace with pending goals: Run (a stored
   * plan), + goal, and what became of the last change. */
  renderPlanBar() {
    const t = this.model.trace;
    const pending = [...this.model.goals.values()].some((g) => g.status === 'pending');
    const show = this.planEditable() && (t.status === 'planned' || pending);
    this.planBarEl.hidden = !show;
    if (!show) {
      // A run took the plan: what was said about the last change no longer holds.
      this.planBarEl.replaceChildren();
      this.planNoteState = null;
      return;
    }
    const planned = t.status === 'planned';
    const adding = this.editing?.kind === 'new';
    const note = this.planNoteState;
    this.planBarEl.replaceChildren();
    append(this.planBarEl, [
      h('div', { class: 'plan-row' },
        h('strong', {}, planned ? 'Plan' : 'Pending goals'),
        h('span', { class: 'small muted' }, planned
          ? 'Review it: click a goal to reword it, or use its tools; Run carries it out in this trace.'
          : 'Goals that have not started can still be changed.'),
        planned ? h('button', { type: 'button', class: 'run', onclick: (e) => this.runPlan(e.currentTarget) }, 'Run') : null,
        h('button', { type: 'button', class: 'add-goal', onclick: () => this.startEdit('new', null, '') }, '+ goal')),
      adding ? this.editor('A new goal at the end of the plan', (text) => this.planAction('Add', () => this.addGoal({ description: text }))) : null,
      note ? h('p', { class: `small note ${note.kind || ''}`, role: note.kind === 'err' ? 'alert' : 'status' }, note.text) : null]);
  }

  /** The tools of a pending goal: agent, sub-goal, goal after, move, indent, outdent, delete. */
  goalTools(model, goal) {
    if (!this.goalEditable(model, goal)) return null;
    const parentId = goal.parent_id ?? null;
    const siblings = model.children(parentId);
    const i = siblings.findIndex((g) => g.id === goal.id);
    const prev = siblings[i - 1];
    const parent = parentId ? model.goals.get(parentId) : null;
    const finished = (g) => ['completed', 'abandoned'].includes(g.status);
    const tool = (text, title, action, disabled) => h('button', {
      type: 'button', class: 'plan-tool', title, 'aria-label': `${title}: ${goal.description}`, 'data-plan-tool': text,
      disabled: disabled ? true : null,
      onclick: (e) => { e.stopPropagation(); action(); },
    }, text);
    const move = (body) => () => this.planAction('Move', () => this.patchGoal(goal, body));
    const editing = this.editing && this.editing.goalId === goal.id ? this.editing.kind : null;
    const editor = editing === 'agent'
      ? this.editor('Agent profile (empty: none)', (text) => this.planAction('Set agent', () => this.patchGoal(goal, { agent: text.replace(/^@/, '') })), { allowEmpty: true })
      : editing === 'check'
        ? this.editor('Check command (empty: none)', (text) => this.planAction('Set check', () => this.patchGoal(goal, { check: text })), { allowEmpty: true })
      : editing === 'sub'
        ? this.editor('A new sub-goal', (text) => this.planAction('Add', () => this.addGoal({ description: text, parent_id: goal.id })))
        : editing === 'after'
          ? this.editor('A new goal after this one', (text) => this.planAction('Add', () => this.addGoal({ description: text, parent_id: parentId, index: i + 1 })))
          : null;
    return h('div', { class: 'plan-tools', 'data-goal-id': goal.id },
      tool('@', 'Set the agent that carries it out', () => this.startEdit('agent', goal.id, goal.agent || '')),
      tool('⚑', 'Set the check: a command that must exit 0 before it is done', () => this.startEdit('check', goal.id, goal.check?.command || '')),
      tool('+sub', 'Add a sub-goal', () => this.startEdit('sub', goal.id, '')),
      tool('+after', 'Add a goal after it', () => this.startEdit('after', goal.id, '')),
      tool('↑', 'Move up', move({ index: i - 1 }), i <= 0),
      tool('↓', 'Move down', move({ index: i + 1 }), i >= siblings.length - 1),
      tool('→', 'Indent: make it the last sub-goal of the goal above', move({ parent_id: prev?.id }), !prev || finished(prev)),
      tool('←', 'Outdent: put it after its parent', () => {
        const up = model.children(parent.parent_id ?? null);
        return move({ parent_id: parent.parent_id ?? null, index: up.findIndex((g) => g.id === parent.id) + 1 })();
      }, !parent),
      tool('✕', 'Delete it and its sub-goals', () => this.planAction('Delete', () => api(this.goalPath(goal), { method: 'DELETE' }))),
      editor);
  }

  /** An input for the edit being typed (`this.editing`), whose text survives re-renders. Enter
   * saves with `save(text)`, Escape cancels. */
  editor(label, save, { allowEmpty = false } = {}) {
    const editing = this.editing;
    const input = h('input', {
      type: 'text', class: 'plan-input', 'data-edit': `${editing.kind}:${editing.goalId || ''}`,
      'aria-label': label, placeholder: label,
      onclick: (e) => e.stopPropagation(),
      oninput: (e) => { editing.text = e.currentTarget.value; },
      onkeydown: (e) => {
        e.stopPropagation();
        if (e.key === 'Enter' && !e.isComposing) {
          e.preventDefault();
          const text = editing.text.trim();
          this.editing = null;
          if (text || allowEmpty) save(text);
          this.schedule();
        } else if (e.key === 'Escape') {
          e.preventDefault();
          this.editing = null;
          this.schedule();
        }
      },
    });
    input.value = editing.text;
    return input;
  }

  startEdit(kind, goalId, text) {
    this.editing = { kind, goalId, text };
    this.render();
  }

  /** Keeps the keyboard in the input of the edit being typed, across re-renders. */
  focusEditor() {
    const input = this.editing && this.viewInput();
    if (input && document.activeElement !== input) {
      input.focus({ preventScroll: true });
      input.setSelectionRange(input.value.length, input.value.length);
    }
  }

  viewInput() {
    return this.planBarEl.querySelector('[data-edit]') || this.dagEl.querySelector('[data-edit]');
  }

  goalPath(goal) {
    return `/api/traces/${enc(this.traceId)}/goals/${enc(goal.id)}`;
  }

  patchGoal(goal, body) {
    return api(this.goalPath(goal), { method: 'PATCH', body });
  }

  addGoal(body) {
    return api(`/api/traces/${enc(this.traceId)}/goals`, { body });
  }

  /** Runs one change of the plan and says how it went; the page shows the change itself when
   * its events arrive. */
  async planAction(what, call) {
    this.planNoteState = { text: `${what}…` };
    this.schedule();
    try {
      await call();
      this.planNoteState = { text: `${what}: done.`, kind: 'ok' };
    } catch (error) {
      this.planNoteState = { text: `${what} refused: ${error.message}`, kind: 'err' };
    }
    if (!this.stopped) this.schedule();
  }

  /** Carries out the stored plan in this trace; the page follows the run. */
  runPlan(button) {
    button.disabled = true;
    this.editing = null;
    this.planAction('Run', () => api(`/api/traces/${enc(this.traceId)}/run`, { method: 'POST' }));
  }

  renderApprovals() {
    const pending = this.model.pendingApprovals;
    // Drawn again only when the waiting calls change, so a reason being typed stays.
    const shown = pending.map((p) => p.tool_call_id).join('\n');
    if (shown === this.approvalsShown) return;
    this.approvalsShown = shown;
    if (!pending.length) {
      this.approvalsEl.replaceChildren();
      return;
    }
    this.approvalsEl.replaceChildren(
      h('h2', {}, 'Waiting for your approval'),
      ...pending.map((p) => {
        const reason = h('input', { type: 'text', class: 'reason', placeholder: 'reason (optional, sent with a rejection)', 'aria-label': `Reason for ${p.tool_name}` });
        const decide = async (approve, button) => {
          button.disabled = true;
          try {
            await api(`/api/traces/${enc(this.traceId)}/approvals/${enc(p.tool_call_id)}`, { body: { approve, reason: reason.value || undefined } });
            this.model.pendingApprovals = this.model.pendingApprovals.filter((x) => x.tool_call_id !== p.tool_call_id);
            this.renderApprovals();
          } catch (error) {
            button.disabled = false;
            alert(`Could not send the decision: ${error.message}`);
          }
          this.refresh();
        };
        return h('div', { class: 'approval', 'data-tool-call-id': p.tool_call_id },
          h('div', {}, h('strong', {}, p.tool_name), h('span', { class: 'small muted' }, ` asked ${fmtAge(p.requested_at)}`)),
          // An approval rule cannot check this call: the person reads why before deciding.
          p.warning ? h('div', { class: 'approval-warning', role: 'alert' }, `⚠ ${p.warning}`) : null,
          foldable(argumentsText(p.arguments), 'arguments', `approval:${p.tool_call_id}`),
          h('div', { class: 'approval-actions' },
            h('button', { class: 'approve', type: 'button', onclick: (e) => decide(true, e.currentTarget) }, 'Approve'),
            h('button', { class: 'reject', type: 'button', onclick: (e) => decide(false, e.currentTarget) }, 'Reject'),
            reason));
      }));
  }

  /** A tool call asking the person a question writes no event while it waits: while the run
   * goes on, its questions are looked for every second and a half. */
  pollElicitations(status) {
    clearTimeout(this.elicitationTimer);
    if (this.stopped || status !== 'running') return;
    this.elicitationTimer = setTimeout(async () => {
      try {
        const listed = await api(`/api/traces/${enc(this.traceId)}/elicitations`);
        if (this.stopped) return;
        this.model.pendingElicitations = listed.elicitations || [];
        this.renderElicitations();
      } catch (_) { /* the next refresh tries again */ }
      this.pollElicitations(this.model.trace?.status);
    }, 1500);
  }

  /** The questions MCP servers ask, each a small form built from its schema (text, number,
   * yes/no and choice fields, with their defaults) or a page to open, and Accept / Decline. */
  renderElicitations() {
    const pending = this.model.pendingElicitations || [];
    // Drawn again only when the questions change, so what is being typed stays.
    const shown = pending.map((q) => q.id).join('\n');
    if (shown === this.elicitationsShown) return;
    this.elicitationsShown = shown;
    if (!pending.length) {
      this.elicitationsEl.replaceChildren();
      return;
    }
    this.elicitationsEl.replaceChildren(
      h('h2', {}, 'An MCP server asks you'),
      ...pending.map((q) => elicitationForm(q, async (body) => {
        await api(`/api/traces/${enc(this.traceId)}/elicitations/${enc(q.id)}`, { body });
        this.model.pendingElicitations = this.model.pendingElicitations.filter((x) => x.id !== q.id);
        this.renderElicitations();
      })));
  }

  renderDag(model) {
    const t = model.trace;
    const start = h('div', { class: 'node start' },
      h('button', {
        class: 'card nav', type: 'button', 'data-key': `start:${model.traceId}`,
        title: 'Open the task and the messages not attached to a goal',
        onclick: () => this.openPanel(model, null, 'Task and messages outside any goal', { about: { summary: model.trace?.summary, summaryLabel: 'Final answer' } }),
      }, h('span', { class: 'num' }, 'START'), ' ', h('span', { class: 'desc' }, oneLine(model.mission || t?.task || '', 200))));
    const ended = t && ['completed', 'failed', 'cancelled'].includes(t.status);
    const items = [start];
    if (model.goals.size) items.push(...this.renderSeq(model, null, model.numbers()));
    else {
      // A trace that kept no plan: its work is one edge, every message.
      const stats = { message_count: t?.total_messages, total_tokens: t?.total_tokens, total_cost: t?.total_cost };
      items.push(h('div', { class: 'step no-goals' }, h('div', { class: 'edge' }, h('button', {
        class: 'edge-label nav', type: 'button', 'data-key': `all:${model.traceId}`,
        title: 'The trace has no goals: this is all its work. Enter: messages.',
        'aria-label': `All the work, no goals: ${fmtStats(stats)}`,
        onclick: () => this.openConversation(),
      }, h('span', { class: 'preview' }, ended ? 'no goals: every message' : 'no goals yet: every message'), h('span', { class: 'stats' }, fmtStats(stats))))));
    }
    if (ended) {
      items.push(h('div', { class: `step end st-${t.status}` },
        h('div', { class: 'edge plain' }),
        h('div', { class: 'node' }, h('div', { class: 'card' }, h('span', { class: 'num' }, 'END'), ' ', statusChip(t.status), ' ',
          h('span', { class: 'desc' }, oneLine(t.error || t.summary || '', 200))))));
    }
    return h('div', { class: 'seq root' }, items);
  }

  /** The goals under `parentId`, in order: steps (edge + node), expanded groups, and the
   * lanes that follow an explore_start goal. */
  renderSeq(model, parentId, numbers) {
    const out = [];
    for (const goal of model.children(parentId)) {
      const key = `${model.traceId}#${goal.id}`;
      const hasKids = model.children(goal.id).length > 0;
      // A stored plan shows its pending goals open, so every goal can be changed.
      const open = this.expanded.has(key)
        || (model.trace?.status === 'planned' && this.goalEditable(model, goal) && !this.collapsed.has(key));
      if (hasKids && open) out.push(this.renderGroup(model, goal, numbers, key));
      else out.push(this.renderStep(model, goal, numbers, key, hasKids));
      if (goal.type === 'explore_start') {
        const branches = model.branchesOf(goal);
        if (branches.length) out.push(this.renderLanes(model, goal, branches));
      }
    }
    return out;
  }

  goalLabel(model, goal, numbers) {
    const num = numbers.get(goal.id);
    const type = goal.type === 'explore_start' ? 'explore' : goal.type === 'explore_merge' ? 'merge' : null;
    const editable = this.goalEditable(model, goal);
    const rewording = editable && this.editing?.kind === 'reword' && this.editing.goalId === goal.id;
    const desc = rewording
      ? this.editor('New description', (text) => this.planAction('Reword', () => this.patchGoal(goal, { description: text })))
      : editable
        ? h('span', {
          class: 'desc editable', title: 'Click (or F2) to reword this pending goal', tabindex: '0', role: 'button',
          'aria-label': `Reword: ${goal.description}`,
          onclick: (e) => { e.stopPropagation(); this.startEdit('reword', goal.id, goal.description); },
          onkeydown: (e) => {
            if (e.key !== 'Enter' && e.key !== 'F2') return;
            e.preventDefault();
            e.stopPropagation();
            this.startEdit('reword', goal.id, goal.description);
          },
        }, goal.description)
        : h('span', { class: 'desc' }, goal.description);
    return [
      h('span', { class: 'num' }, num || '✕'),
      type ? h('span', { class: `kind k-${goal.type}` }, type) : null,
      desc,
      goal.agent ? h('span', { class: 'agent-badge', title: `Carried out by the ${goal.agent} profile` }, `@${goal.agent}`) : null,
      checkBadge(goal),
    ];
  }

  renderStep(model, goal, numbers, key, hasKids) {
    const stats = goal.cumulative_stats || {};
    const current = model.currentId === goal.id;
    const holds = !current && model.holdsCurrent(goal.id);
    const classes = ['step', `st-${goal.status}`, current ? 'current' : '', holds ? 'holds-current' : ''].join(' ');
    const label = numbers.get(goal.id) ? `${numbers.get(goal.id)} ${goal.description}` : `${goal.description} (abandoned)`;
    const kids = model.children(goal.id).length;
    const edge = h('div', { class: 'edge' },
      h('button', {
        class: 'edge-label nav', type: 'button', 'data-key': `edge:${key}`, 'data-goal-id': goal.id,
        'aria-expanded': hasKids ? 'false' : null,
        title: hasKids ? 'The work for this goal and its sub-goals (cumulative). Enter: messages; → expands.' : 'The work for this goal. Enter: messages.',
        'aria-label': `Work for ${label}: ${fmtStats(stats)}${stats.preview ? `, ${stats.preview}` : ''}`,
        onclick: () => this.openPanel(model, goal, `${label}`),
      },
      h('span', { class: 'preview' }, stats.preview || (stats.message_count ? '' : goal.status === 'pending' || goal.status === 'in_progress' ? 'no messages yet' : 'no messages')),
      h('span', { class: 'stats' }, fmtStats(stats))),
      hasKids ? h('button', {
        class: 'toggle', type: 'button', 'data-toggle': key, 'aria-label': `Expand ${label} into its ${kids} sub-goals`,
        onclick: () => this.toggle(key, true),
      }, `▸ ${kids} sub-goal${kids === 1 ? '' : 's'}`) : null);
    const shown = goalSummary(model, goal);
    const summary = goal.status === 'abandoned'
      ? h('div', { class: 'why' }, `abandoned: ${goal.summary || goal.reason || 'no reason given'}`)
      : goal.type === 'explore_start' && goal.status !== 'completed' ? h('div', { class: 'outcome' }, `${model.branchesOf(goal).length} parallel branches`)
        : goal.type === 'explore_merge' && goal.status === 'completed' ? h('div', { class: 'outcome' }, mergeLine(model, goal))
        : shown ? h('div', { class: 'outcome' }, oneLine(plain(shown), 220)) : null;
    const node = h('div', { class: 'node' },
      h('div', {
        class: 'card nav', tabindex: '0', role: 'button', 'data-key': `node:${key}`, 'data-goal-id': goal.id,
        'aria-current': current ? 'step' : null,
        title: shown || goal.description,
        onclick: () => this.openPanel(model, goal, label),
        onkeydown: (e) => { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); this.openPanel(model, goal, label); } },
      },
      h('div', { class: 'node-head' }, this.goalLabel(model, goal, numbers), statusChip(goal.status), current ? h('span', { class: 'here' }, '← current') : null),
      summary), this.forkButton(model, goal, numbers), this.rewindButton(model, goal, numbers),
    this.diffButton(model, goal, numbers), this.goalTools(model, goal), this.diffBox(model, goal));
    return h('div', { class: classes, 'data-goal-id': goal.id }, edge, node);
  }

  /** "Fork here" on a goal that started, of a main trace that is not running: posts the fork
   * (a new trace with the history and plan of just before the goal started) and opens it. */
  forkButton(model, goal, numbers) {
    const number = numbers.get(goal.id);
    const t = model.trace;
    if (!number || goal.status === 'pending' || !t || t.parent_trace_id) return null;
    if (!['completed', 'failed', 'cancelled'].includes(t.status)) return null;
    return h('button', {
      class: 'fork', type: 'button', 'data-fork-goal': number,
      title: `A new trace with the history and plan of just before goal ${number} started, to do it another way`,
      onclick: async (e) => {
        e.stopPropagation();
        const button = e.currentTarget;
        button.disabled = true;
        try {
          const made = await api(`/api/traces/${enc(model.traceId)}/fork`, { body: { goal: number } });
          location.hash = `#/traces/${enc(made.trace_id)}`;
        } catch (error) {
          button.disabled = false;
          button.textContent = `Fork failed: ${error.message}`;
        }
      },
    }, 'Fork here');
  }

  /** "Rewind here" beside "Fork here", on a trace with checkpoints: puts the workspace's files
   * back as they were when the goal started (after saying what would change, and asking) and forks the trace there, then
   * opens the fork. Files changed since the run's last checkpoint are kept: the rewind is
   * refused and says which. */
  rewindButton(model, goal, numbers) {
    const number = numbers.get(goal.id);
    const t = model.trace;
    if (!number || goal.status === 'pending' || !t || t.parent_trace_id || !model.hasCheckpoints) return null;
    if (!['completed', 'failed', 'cancelled'].includes(t.status)) return null;
    return h('button', {
      class: 'rewind', type: 'button', 'data-rewind-goal': number,
      title: `Put the workspace's files back as they were when goal ${number} started, and fork the trace there`,
      onclick: async (e) => {
        e.stopPropagation();
        const button = e.currentTarget;
        button.disabled = true;
        const url = `/api/traces/${enc(model.traceId)}/rewind`;
        try {
          const plan = await api(url, { body: { goal: number, dry_run: true } });
          const c = plan.changes;
          const files = (list) => list.length ? ` (${list.slice(0, 5).join(', ')}${list.length > 5 ? ', …' : ''})` : '';
          const question = `Rewind to the start of goal ${number}? ` +
            `${c.added.length} file(s) brought back${files(c.added)}, ${c.modified.length} put back${files(c.modified)}, ` +
            `${c.deleted.length} deleted${files(c.deleted)}; the trace is forked there.`;
          if (!window.confirm(question)) {
            button.disabled = false;
            return;
          }
          const made = await api(url, { body: { goal: number } });
          location.hash = `#/traces/${enc(made.trace_id)}`;
        } catch (error) {
          button.disabled = false;
          button.textContent = `Rewind failed: ${error.message}`;
        }
      },
    }, 'Rewind here');
  }

  /** "Diff" beside "Rewind here", on a trace with checkpoints: shows (or hides) the goal's file
   * changes under it, from `GET .../goals/{goal_id}/diff`: from its start to its end, or to the
   * workspace now while it has not ended. */
  diffButton(model, goal, numbers) {
    const number = numbers.get(goal.id);
    if (!number || goal.status === 'pending' || !model.trace || !model.hasCheckpoints) return null;
    const key = `${model.traceId}#${goal.id}`;
    const open = this.diffs.has(key);
    return h('button', {
      class: 'diff', type: 'button', 'data-diff-goal': number, 'aria-expanded': open ? 'true' : 'false',
      title: `The file changes of goal ${number}, as a unified diff`,
      onclick: async (e) => {
        e.stopPropagation();
        if (this.diffs.has(key)) {
          this.diffs.delete(key);
          this.render();
          return;
        }
        this.diffs.set(key, { loading: true });
        this.render();
        let shown;
        try {
          shown = await api(`/api/traces/${enc(model.traceId)}/goals/${enc(goal.id)}/diff`);
        } catch (error) {
          shown = { error };
        }
        if (this.diffs.has(key)) {
          this.diffs.set(key, shown);
          this.render();
        }
      },
    }, open ? 'Hide diff' : 'Diff');
  }

  /** The diff of a goal, when its "Diff" was clicked: added lines green, removed lines red. */
  diffBox(model, goal) {
    const shown = this.diffs.get(`${model.traceId}#${goal.id}`);
    if (!shown) return null;
    const box = (...kids) => h('div', { class: 'goal-diff', 'data-goal-id': goal.id }, ...kids);
    if (shown.loading) return box(h('p', { class: 'muted small' }, 'Loading the diff…'));
    if (shown.error) {
      const code = shown.error.code;
      const why = code === 'no_checkpoint' || code === 'no_checkpoints'
        ? `No diff: no checkpoint of this goal (${shown.error.message})`
        : `The diff could not be read: ${shown.error.message}`;
      return box(h('p', { class: 'note' }, why));
    }
    const note = shown.to === 'workspace'
      ? h('p', { class: 'muted small' }, 'The goal has not ended: compared with the workspace as it is now.')
      : null;
    if (!shown.diff) return box(note, h('p', { class: 'note' }, 'No file changed in this goal.'));
    const lines = shown.diff.replace(/\n$/, '').split('\n').map((line) => {
      const kind = /^(\+\+\+|---|diff |index |new file|deleted file|similarity|rename |Binary )/.test(line) ? 'file'
        : line.startsWith('+') ? 'add' : line.startsWith('-') ? 'del' : line.startsWith('@@') ? 'hunk' : 'ctx';
      return h('span', { class: `dl ${kind}` }, line);
    });
    return box(note, h('pre', { 'aria-label': 'Unified diff' }, ...lines));
  }

  renderGroup(model, goal, numbers, key) {
    const own = goal.self_stats || {};
    const current = model.currentId === goal.id;
    const label = numbers.get(goal.id) ? `${numbers.get(goal.id)} ${goal.description}` : `${goal.description} (abandoned)`;
    return h('div', { class: `group st-${goal.status} ${current ? 'current' : ''}`, 'data-goal-id': goal.id },
      h('div', { class: 'group-head' },
        h('button', {
          class: 'toggle open', type: 'button', 'data-toggle': key, 'aria-label': `Collapse ${label}`,
          onclick: () => this.toggle(key, false),
        }, '▾'),
        h('div', { class: 'group-title' }, this.goalLabel(model, goal, numbers), statusChip(goal.status)),
        this.goalTools(model, goal),
        goal.status === 'abandoned' ? h('div', { class: 'why' }, `abandoned: ${goal.summary || goal.reason || ''}`) : null),
      h('div', { class: 'edge own' },
        h('button', {
          class: 'edge-label nav', type: 'button', 'data-key': `edge:${key}`, 'data-goal-id': goal.id, 'aria-expanded': 'true',
          title: 'Work attached to this goal itself (self statistics). Enter: messages; ← collapses.',
          'aria-label': `Own work of ${label}: ${fmtStats(own)}`,
          onclick: () => this.openPanel(model, goal, `${label} (own work)`, { ownOnly: true }),
        },
        h('span', { class: 'preview' }, own.preview || 'no own messages'),
        h('span', { class: 'stats' }, `own: ${fmtStats(own)}`))),
      h('div', { class: 'seq' }, this.renderSeq(model, goal.id, numbers)));
  }

  renderLanes(model, goal, branches) {
    return h('div', { class: 'lanes', 'data-explore': goal.id },
      branches.map((id, i) => this.renderLane(model, id, branchLetter(i))));
  }

  /** One branch of an exploration: collapsed, an edge (the whole sub-trace) to its outcome;
   * expanded, the sub-trace's own goals (watched live while the lane is open). */
  renderLane(parentModel, subId, letter) {
    const sub = parentModel.subTraces.get(subId) || { trace_id: subId, task: subId, status: 'running' };
    const key = `lane:${subId}`;
    const open = this.lanes.get(subId);
    const stats = { message_count: sub.total_messages, total_tokens: sub.total_tokens, total_cost: sub.total_cost };
    const label = `Branch ${letter}: ${sub.task}`;
    const about = { status: sub.status, summary: sub.summary || sub.error, summaryLabel: 'Branch result' };
    const whole = () => this.openPanel(new TraceModel(subId), null, label, { wholeTrace: true, about });
    const edge = (text) => h('button', {
      class: 'edge-label nav', type: 'button', 'data-key': `edge:${key}`, 'data-lane': subId,
      'aria-expanded': open ? 'true' : 'false',
      'aria-label': `Work of ${label}: ${fmtStats(stats)}`,
      title: 'The whole branch (its sub-trace). Enter: messages; → shows its goals.',
      onclick: whole,
    }, h('span', { class: 'preview' }, text), h('span', { class: 'stats' }, fmtStats(stats)));
    const outcome = (nav) => h('div', { class: 'node' }, h('div', {
      class: `card ${nav ? 'nav' : ''}`, tabindex: nav ? '0' : null, 'data-key': nav ? `node:${key}` : null, 'data-lane': subId,
      role: nav ? 'button' : null, title: sub.summary || sub.task,
      onclick: nav ? whole : null,
      onkeydown: nav ? (e) => { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); whole(); } } : null,
    },
    h('div', { class: 'node-head' }, h('span', { class: 'num' }, letter), h('span', { class: 'desc' }, oneLine(sub.task, 140)), statusChip(sub.status)),
    sub.summary || sub.error ? h('div', { class: sub.error ? 'outcome err' : 'outcome' }, oneLine(plain(sub.summary || sub.error), 200)) : null));
    if (!open) {
      return h('div', { class: `lane st-${sub.status}`, 'data-lane': subId },
        h('div', { class: 'edge' }, edge(`${sub.agent_type || 'explore'} sub-trace`),
          h('button', {
            class: 'toggle', type: 'button', 'data-toggle': key, 'aria-label': `Show the goals of ${label}`,
            onclick: () => this.toggleLane(subId, true),
          }, '▸ goals')),
        outcome(true));
    }
    const m = open.model;
    let inner;
    if (!open.loaded) inner = h('p', { class: 'muted small empty' }, 'Loading…');
    else if (m.goals.size === 0) {
      // A branch that kept no plan: its work is one edge to its result.
      inner = h('div', { class: `step st-${sub.status}` }, h('div', { class: 'edge' }, edge('no goals: every message')), outcome(false));
    } else {
      inner = [this.renderSeq(m, null, prefixed(m.numbers(), letter)),
        sub.status === 'running' || sub.status === 'waiting' ? null
          : h('div', { class: `step end st-${sub.status}` }, h('div', { class: 'edge plain' }), outcome(false))];
    }
    return h('div', { class: `lane open st-${sub.status}`, 'data-lane': subId },
      h('div', { class: 'group-head lane-head' },
        h('button', {
          class: 'toggle open nav', type: 'button', 'data-toggle': key, 'data-key': `edge:${key}`, 'aria-expanded': 'true',
          'aria-label': `Collapse ${label}`, onclick: () => this.toggleLane(subId, false),
        }, '▾'),
        h('span', { class: 'num' }, letter),
        h('a', { href: `#/traces/${enc(subId)}`, class: 'desc', title: 'Open the branch as a trace of its own' }, oneLine(sub.task, 120)),
        statusChip(sub.status)),
      h('div', { class: 'seq' }, inner));
  }

  toggle(key, open) {
    if (open) {
      this.expanded.add(key);
      this.collapsed.delete(key);
    } else {
      this.expanded.delete(key);
      this.collapsed.add(key);
    }
    this.render();
    const again = this.dagEl.querySelector(`[data-key="${CSS.escape(`edge:${key}`)}"]`);
    if (again) again.focus({ preventScroll: true });
  }

  toggleLane(subId, open) {
    const existing = this.lanes.get(subId);
    if (open && !existing) {
      const model = new TraceModel(subId);
      const lane = { model, watch: null, loaded: false };
      lane.watch = new Watch(subId, {
        onConnected: (e) => { lane.loaded = true; this.onConnected(model, e); },
        onEvent: (e, fresh) => this.onEvent(model, e, fresh),
        onDelta: (e) => this.onDelta(model, e),
      });
      this.lanes.set(subId, lane);
      const watch = lane.watch;
      watch.start();
    } else if (!open && existing) {
      existing.watch.stop();
      this.lanes.delete(subId);
    }
    this.render();
    const again = this.dagEl.querySelector(`[data-key="${CSS.escape(`edge:lane:${subId}`)}"]`);
    if (again) again.focus({ preventScroll: true });
  }

  // --- keyboard ---

  /** ↑/↓ move between nodes and edges, → expands, ← collapses (Esc, anywhere, closes the
   * messages). */
  onKey(e) {
    const target = e.target.closest('.nav');
    if (!target) return;
    const all = [...this.dagEl.querySelectorAll('.nav')];
    const i = all.indexOf(target);
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      e.preventDefault();
      const next = all[i + (e.key === 'ArrowDown' ? 1 : -1)];
      if (next) next.focus();
    } else if (e.key === 'ArrowRight' || e.key === 'ArrowLeft') {
      const key = target.dataset.key || '';
      const open = e.key === 'ArrowRight';
      if (key.startsWith('edge:lane:')) {
        e.preventDefault();
        this.toggleLane(key.slice('edge:lane:'.length), open);
      } else if (key.startsWith('edge:') && target.hasAttribute('aria-expanded')) {
        e.preventDefault();
        this.toggle(key.slice('edge:'.length), open);
      }
    }
  }

  // --- the messages panel ---

  /** Opens the messages of `goal` (and its sub-goals unless `ownOnly`), of the messages outside
   * any goal when `goal` is null, or of the whole trace when `wholeTrace`. `about`: a status
   * and summary to show above them. `newest`: scrolled to the newest message at first;
   * `focus`: the keyboard moves to the panel. */
  async openPanel(model, goal, title, { ownOnly = false, wholeTrace = false, about = null, newest = false, focus = true } = {}) {
    const goalIds = goal ? (ownOnly ? [goal.id] : model.subtree(goal.id).map((g) => g.id)) : null;
    const panel = {
      traceId: model.traceId, goalIds, wholeTrace, title, goal, model, about, fresh: true, newest,
      messages: new Map(), returnFocus: focus ? document.activeElement : null,
    };
    this.panel = panel;
    this.panelEl.hidden = false;
    this.renderPanel('Loading…');
    try {
      let list = [];
      if (goalIds) {
        const answers = await Promise.all(goalIds.map((id) => api(`/api/traces/${enc(model.traceId)}/messages?goal_id=${enc(id)}`)));
        list = answers.flatMap((a) => a.messages);
      } else {
        const { messages } = await api(`/api/traces/${enc(model.traceId)}/messages`);
        list = wholeTrace ? messages : messages.filter((m) => !m.goal_id);
      }
      if (this.panel !== panel) return;
      for (const m of list) panel.messages.set(m.message_id, m);
      this.renderPanel();
    } catch (error) {
      if (this.panel === panel) this.renderPanel(`Cannot load the messages: ${error.message}`);
    }
    if (focus && this.panel === panel) this.panelEl.querySelector('.panel-title')?.focus();
  }

  closePanel() {
    if (!this.panel) return;
    const back = this.panel.returnFocus;
    this.panel = null;
    this.panelEl.hidden = true;
    this.panelEl.replaceChildren();
    if (back && document.contains(back)) back.focus();
  }

  /** A live message of `traceId`: added to (or updated in) the open panel when it belongs there. */
  panelMessage(traceId, message) {
    const p = this.panel;
    if (!p || !message || p.traceId !== traceId) return;
    const belongs = p.wholeTrace || (p.goalIds ? p.goalIds.includes(message.goal_id) : !message.goal_id);
    if (!belongs) return;
    p.messages.set(message.message_id, message);
    this.renderPanelSoon();
  }

  renderPanelSoon() {
    if (this.panelFrame) return;
    this.panelFrame = requestAnimationFrame(() => {
      this.panelFrame = 0;
      if (this.panel) this.renderPanel();
    });
  }

  renderPanel(note) {
    const p = this.panel;
    const list = [...p.messages.values()].sort((a, b) => a.sequence - b.sequence);
    const goal = p.goal;
    const explore = goal && (goal.type === 'explore_start' ? goal : goal.type === 'explore_merge' ? p.model.goals.get(goal.explore_start_id) : null);
    const about = goal
      ? {
        status: goal.status, reason: goal.reason, summaryLabel: goal.status === 'abandoned' ? 'Why it was abandoned' : 'Outcome',
        summary: goal.status === 'abandoned' ? goal.summary : goalSummary(p.model, goal),
        branches: explore ? p.model.branchesOf(explore) : null,
      }
      : p.about || {};
    const info = h('div', { class: 'goal-info small' },
      about.status ? statusChip(about.status) : null,
      about.reason ? h('div', {}, h('span', { class: 'muted' }, 'why: '), about.reason) : null,
      about.summary ? h('details', { open: about.summary.length < 600 }, h('summary', {}, about.summaryLabel || 'Outcome'), h('div', { class: 'text' }, about.summary)) : null,
      about.branches?.length ? h('div', { class: 'muted branches' }, 'Sub-traces: ', about.branches.flatMap((id, i) => [
        i ? ', ' : '', `${branchLetter(i)} `, h('a', { href: `#/traces/${enc(id)}`, class: 'branch-link' }, id)])) : null,
      goal ? h('div', { class: 'muted' }, `own: ${fmtStats(goal.self_stats)} · with sub-goals: ${fmtStats(goal.cumulative_stats)}`) : null);
    // The answer being streamed, where its message will appear.
    const typing = this.typing.get(p.traceId);
    const typingHere = typing && (p.wholeTrace || (p.goalIds ? p.goalIds.includes(typing.goalId) : !typing.goalId));
    const typingItem = typingHere ? h('li', { class: 'typing' }, h('div', { class: 'small muted' }, 'assistant · writing…'), h('div', { class: 'text' }, typing.text)) : null;
    const body = note
      ? h('p', { class: 'muted' }, note)
      : list.length || typingItem ? h('ol', { class: 'messages' }, list.map((m) => h('li', {}, renderMessage(m, p.goalIds && p.goalIds.length > 1 ? this.goalTag(p, m) : null))), typingItem)
        : h('p', { class: 'muted' }, 'No messages.');
    const scroller = this.panelEl.querySelector('.panel-body');
    const atBottom = scroller && scroller.scrollTop + scroller.clientHeight >= scroller.scrollHeight - 4;
    const keepTop = scroller ? scroller.scrollTop : 0;
    const unfolded = new Set([...this.panelEl.querySelectorAll('details[data-fold]')].filter((d) => d.open).map((d) => d.dataset.fold));
    this.panelEl.replaceChildren(
      h('div', { class: 'panel-head' },
        h('h2', { class: 'panel-title', tabindex: '-1' }, p.title),
        h('button', { type: 'button', class: 'close', 'aria-label': 'Close the messages', onclick: () => this.closePanel() }, '✕')),
      h('div', { class: 'panel-body' }, info, h('p', { class: 'small muted count' }, `${list.length} message${list.length === 1 ? '' : 's'}`), body));
    for (const d of this.panelEl.querySelectorAll('details[data-fold]')) if (unfolded.has(d.dataset.fold)) d.open = true;
    const next = this.panelEl.querySelector('.panel-body');
    // Follow new messages at the bottom, unless the panel was just opened (at the top, or at
    // the newest message) or scrolled up.
    if (!note && p.fresh) {
      p.fresh = false;
      if (p.newest) next.scrollTop = next.scrollHeight;
    } else next.scrollTop = atBottom && !note ? next.scrollHeight : keepTop;
  }

  goalTag(p, m) {
    const lane = this.lanes.get(p.traceId);
    const model = p.traceId === this.traceId ? this.model : lane?.model;
    const goal = model?.goals.get(m.goal_id);
    return goal ? oneLine(goal.description, 60) : null;
  }
}

/** The letter of the `i`-th branch of an exploration: A, B, … */
function branchLetter(i) {
  return String.fromCharCode(65 + (i % 26));
}

/** The first sentence of a text, on one line (at most 200 characters). */
function firstSentence(text) {
  const line = oneLine(plain(text), 4000);
  const end = line.search(/[.!?](\s|$)/);
  return oneLine(end >= 0 ? line.slice(0, end + 1) : line, 200);
}

/** What the branches of an exploration found, a sentence each: "A (its task): the first
 * sentence of its result." (An explore_start goal's stored summary only lists the branches'
 * sub-trace ids; the panel shows those as links below this.) */
function explorationFindings(model, start) {
  const ids = model.branchesOf(start);
  if (!ids.length) return 'An exploration without branches.';
  const said = ids.map((id, i) => {
    const sub = model.subTraces.get(id) || {};
    const task = sub.task ? ` (${oneLine(sub.task, 80)})` : '';
    const result = sub.summary || sub.error;
    const open = !sub.status || sub.status === 'running' || sub.status === 'waiting';
    let text = result ? firstSentence(result) : open ? 'still running' : `${sub.status}, with no result`;
    if (!/[.!?…]$/.test(text)) text += '.';
    return `${branchLetter(i)}${task}: ${text}`;
  });
  return `${ids.length === 1 ? 'One branch' : `${ids.length} branches`} explored. ${said.join(' ')}`;
}

/** The summary shown for a goal. A finished exploration's is what its branches found. A goal
 * completed because all its sub-goals were carries their summaries joined ("description:
 * summary; …"): it is joined again from what is shown for each, the exploration's start
 * standing for its merge (whose summary is the whole report). */
function goalSummary(model, goal) {
  if (goal.type === 'explore_start' && goal.status === 'completed') return explorationFindings(model, goal);
  const kids = model.children(goal.id).filter((c) => c.status !== 'abandoned');
  const joined = kids.map((c) => (c.summary ? `${c.description}: ${c.summary}` : c.description)).join('; ');
  if (!kids.length || goal.summary !== joined) return goal.summary || null;
  return kids.filter((c) => c.type !== 'explore_merge').map((c) => {
    const said = goalSummary(model, c);
    if (c.type === 'explore_start') return said;
    return said ? `${c.description}: ${said}` : c.description;
  }).join('; ');
}

/** One line for a merge goal: how many branches it merged and which one was picked; the
 * whole report is in the messages panel. */
function mergeLine(model, goal) {
  const start = model.goals.get(goal.explore_start_id);
  const count = start ? model.branchesOf(start).length : 0;
  const picked = goal.selected_branch ? `; picked ${goal.selected_branch}` : '';
  return `merged the results of ${count} branch${count === 1 ? '' : 'es'}${picked} (report: open the goal)`;
}

/** Display numbers of a branch's goals, prefixed with the branch letter: A.1, A.2 … */
function prefixed(numbers, letter) {
  const out = new Map();
  for (const [id, n] of numbers) out.set(id, `${letter}.${n}`);
  return out;
}

// ----- messages -------------------------------------------------------------------------------

/** Tool arguments as text to read, for a <pre>: a JSON object or array one field a line
 * (`key: value`, `- item`, nested ones indented), and a string with line breaks as its lines,
 * indented under `key: |` as YAML writes it, so file contents and commands show real line
 * breaks instead of `\n` escapes. Other strings are bare when that is unambiguous and JSON
 * quoted otherwise; arguments that are not JSON are shown as they are. */
function argumentsText(args) {
  let value = args;
  if (typeof args === 'string') {
    try { value = JSON.parse(args); } catch { return args; }
  }
  if (value && typeof value === 'object' && Object.keys(value).length) return layoutValue(value, '').slice(1);
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** `value` laid out at `indent`: a scalar on the current line, or a block starting on a new
 * line (so the caller writes `key:` or `-` before it). */
function layoutValue(value, indent) {
  if (typeof value === 'string' && /\r?\n/.test(value)) {
    const lines = value.split(/\r?\n/);
    if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
    return ` |\n${lines.map((line) => (line ? indent + line : '')).join('\n')}`;
  }
  if (Array.isArray(value)) {
    if (!value.length) return ' []';
    const inner = `${indent}  `;
    return `\n${value.map((item) => {
      const laid = layoutValue(item, inner);
      // A nested block starts on the dash's line: `- key: value`.
      return laid.startsWith(`\n${inner}`) ? `${indent}- ${laid.slice(inner.length + 1)}` : `${indent}-${laid}`;
    }).join('\n')}`;
  }
  if (value && typeof value === 'object') {
    const entries = Object.entries(value);
    if (!entries.length) return ' {}';
    return `\n${entries.map(([key, item]) => `${indent}${bareOrQuoted(key)}:${layoutValue(item, `${indent}  `)}`).join('\n')}`;
  }
  return ` ${typeof value === 'string' ? bareOrQuoted(value) : JSON.stringify(value)}`;
}

/** A one-line string as it is when it cannot be read as anything else, else JSON-quoted. */
function bareOrQuoted(text) {
  const bare = text !== '' && text === text.trim()
    && !/^(true|false|null|~|[-+]?\.?\d)/i.test(text)
    && !/^[-?:,[\]{}#&*!|>'"%@`]/.test(text)
    && !/: |\s#|:$|[\u0000-\u001f\u007f]/.test(text);
  return bare ? text : JSON.stringify(text);
}

/** Text in a <pre>; long text is folded to its first lines with a control to show it all. */
function foldable(text, what, key) {
  text = String(text ?? '');
  const lines = text.split('\n');
  if (text.length <= FOLD_CHARS && lines.length <= FOLD_LINES) return h('pre', { class: 'out' }, text);
  const head = lines.slice(0, FOLD_LINES).join('\n').slice(0, FOLD_CHARS);
  const more = h('details', { class: 'fold', 'data-fold': key },
    h('summary', {}, `show all ${what}: ${fmtInt(lines.length)} lines, ${fmtInt(text.length)} characters`),
    h('pre', { class: 'out' }, text));
  const preview = h('pre', { class: 'out folded' }, `${head}\n…`);
  more.addEventListener('toggle', () => { preview.hidden = more.open; });
  return h('div', {}, preview, more);
}

/** The readable text of an assistant turn's reasoning, as its provider sent it. */
function reasoningText(reasoning) {
  return (reasoning || []).map((r) => {
    if (r.type === 'text') return r.text || '';
    if (r.type === 'thinking') return r.thinking || '';
    if (r.type === 'redacted_thinking') return '(redacted by the provider)';
    if (r.type === 'item') return (r.summary || []).join('\n\n');
    return '';
  }).filter((t) => t).join('\n\n');
}

/** `: 12,345 → 456 tokens` of a compaction's metadata, or nothing. */
function compactionTokens(metadata) {
  const before = metadata?.tokens_before;
  const after = metadata?.tokens_after;
  if (typeof before !== 'number' || typeof after !== 'number') return '';
  return `: ${fmtInt(before)} → ${fmtInt(after)} tokens`;
}

/** A goal's check beside its description: the command (or the judge) and how its latest run
 * went, the whole result in the title. */
function checkBadge(goal) {
  const check = goal.check;
  if (!check) return null;
  const what = check.command != null ? check.command : `judge${check.judge ? `: ${check.judge}` : ''}`;
  const result = goal.check_result;
  const state = !result ? 'unchecked' : result.passed ? 'passed' : 'failed';
  const said = !result ? 'not run yet'
    : result.passed ? 'passed'
      : result.exit_code != null ? `failed (exit ${result.exit_code})` : 'failed';
  const title = `Check set by the ${check.set_by || 'model'}: ${what}. Latest run: ${said}.`
    + (result && result.output ? `\n\n${result.output}` : '');
  return h('span', { class: `check-badge check-${state}`, title, 'data-check': state }, `⚑ ${oneLine(what, 40)} · ${said}`);
}

/** The address of a picture of a trace, as the API serves it (with the token, since an `<img>`
 * cannot send the header). */
function pictureUrl(traceId, id) {
  let url = `/api/traces/${enc(traceId)}/pictures/${enc(id)}`;
  if (TOKEN) url += `?token=${enc(TOKEN)}`;
  return url;
}

/** The pictures of a message (`metadata.images`) as thumbnails, each a link to the whole
 * picture; nothing for a message without any. */
function pictureLinks(m) {
  const images = Array.isArray(m.metadata?.images) ? m.metadata.images : [];
  if (!images.length) return null;
  return h('div', { class: 'pictures' }, images.map((image) => {
    const label = `${image.name || image.media_type} ${image.width}×${image.height}`;
    const url = pictureUrl(m.trace_id, image.id);
    return h('a', { class: 'picture', href: url, target: '_blank', rel: 'noopener', title: label },
      h('img', { src: url, alt: label, loading: 'lazy', width: String(Math.min(image.width, 160)) }),
      h('span', { class: 'muted small' }, label));
  }));
}

function renderMessage(m, goalTag) {
  const compaction = m.metadata && m.metadata.compaction === true;
  const report = m.metadata && m.metadata.closing_report === true;
  const handoff = m.metadata && m.metadata.handoff === true;
  // The runner's own words to the model: open goals it was sent back to, a spent budget.
  const runner = m.metadata && (m.metadata.goals_pending != null || m.metadata.goal_budget != null);
  const role = compaction ? 'compaction summary' : report ? 'closing report' : runner ? 'runner' : m.role;
  const meta = [
    h('span', { class: `role r-${m.role}` }, role),
    handoff ? h('span', { class: 'muted', title: 'Recorded by the runner: the goal names another agent' }, 'handoff') : null,
    h('span', { class: 'muted' }, `#${m.sequence}`),
    m.tool_name ? h('span', { class: 'tool-name' }, m.tool_name) : null,
    goalTag ? h('span', { class: 'muted goal-tag' }, goalTag) : null,
    h('span', { class: 'spacer' }),
    m.tokens != null ? tokensSpan(m.tokens, m.metadata?.usage?.estimated === true, 'muted') : null,
    m.cost != null ? h('span', { class: 'muted' }, fmtCost(m.cost)) : null,
    m.duration_ms != null ? h('span', { class: 'muted' }, `${(m.duration_ms / 1000).toFixed(1)} s`) : null,
  ];
  const body = [];
  if (compaction) {
    body.push(h('p', { class: 'small replaced' },
      `A full compaction: from here on the model saw this summary instead of the messages before #${m.sequence} (the trace keeps them all)${compactionTokens(m.metadata)}.`));
  }
  const content = m.content;
  if (typeof content === 'string') {
    body.push(m.role === 'tool' ? foldable(content, 'output', `${m.message_id}:output`) : h('div', { class: 'text' }, content));
  } else if (content && typeof content === 'object') {
    const reasoning = reasoningText(content.reasoning);
    if (reasoning) {
      body.push(h('details', { class: 'reasoning' },
        h('summary', {}, `Reasoning (${fmtInt(reasoning.split(/\s+/).filter((w) => w).length)} words)`),
        h('div', { class: 'text' }, reasoning)));
    }
    if (content.text) body.push(h('div', { class: 'text' }, content.text));
    for (const call of content.tool_calls || []) {
      body.push(h('div', { class: 'call' },
        h('div', {}, h('span', { class: 'arrow', 'aria-hidden': 'true' }, '→ '), h('strong', {}, call.name), h('span', { class: 'muted small' }, ` ${call.id || ''}`)),
        foldable(argumentsText(call.arguments), 'arguments', `${m.message_id}:${call.id}`)));
    }
    if (!content.text && !(content.tool_calls || []).length && !reasoning) body.push(foldable(JSON.stringify(content, null, 2), 'content', `${m.message_id}:content`));
  }
  const pictures = pictureLinks(m);
  if (pictures) body.push(pictures);
  if (report) {
    body.push(h('p', { class: 'small' },
      'Written when the plan was done, from the mission, each goal\'s summary and the abandoned goals\' reasons: the run\'s answer.'));
  }
  return h('article', { class: `msg r-${m.role} ${compaction ? 'compaction' : ''} ${report ? 'report' : ''}`, 'data-message-id': m.message_id },
    h('header', {}, meta), body);
}

// ---------------------------------------------------------------------------------------------

window.addEventListener('hashchange', route);
route();
