import { agentStatsLine } from './agent-stats.js';
import { Api, followTurn, UnauthorizedError } from './api.js';
import { approvalItem } from './approvals.js';
import { BackgroundPanel } from './background-panel.js';
import { ConfigEditor } from './config-editor.js';
import { byId, h } from './dom.js';
import { pathOf, renderGraph } from './graph.js';
import { followEvents, messageItem } from './live-view.js';
import { mergePages } from './session-pages.js';
import { recentSessions, rememberSession } from './sessions.js';
import { renderTurn, type TurnView, turnFromRecord } from './timeline.js';
import type { Approval, BackgroundTurnInfo, GraphInfo, MessageItem, SessionBody } from './types.js';

const meta = (name: string) =>
  document.querySelector<HTMLMetaElement>(`meta[name="${name}"]`)?.content.trim() || undefined;

const api = new Api(meta('switchboard-api') ?? '');
const langfuseUrl = meta('switchboard-langfuse');
const configEditor = new ConfigEditor(api);

const elements = {
  status: byId('status'),
  keyForm: byId<HTMLFormElement>('key-form'),
  keyInput: byId<HTMLInputElement>('api-key'),
  sessions: byId<HTMLUListElement>('sessions'),
  newSession: byId<HTMLButtonElement>('new-session'),
  agents: byId<HTMLUListElement>('agents'),
  sessionLabel: byId('session-label'),
  messages: byId<HTMLOListElement>('messages'),
  loadOlder: byId<HTMLButtonElement>('load-older'),
  approvalsSection: byId('approvals-section'),
  approvals: byId<HTMLUListElement>('approvals'),
  chatForm: byId<HTMLFormElement>('chat-form'),
  message: byId<HTMLTextAreaElement>('message'),
  send: byId<HTMLButtonElement>('send'),
  inBackground: byId<HTMLInputElement>('background-toggle'),
  turns: byId<HTMLOListElement>('turns'),
  graphSection: byId('graph-section'),
  graph: byId('graph'),
};

let sessionId: string | undefined;
let turns: TurnView[] = [];
let busy = false;
/** The running turn this page follows as its session opened, if any: opening a session stops following it. */
let following: { turnId: string; stop: AbortController } | undefined;
/** How many agents the server hosts, once known. */
let agentCount: number | undefined;
/** The orchestrator's workflow graph, when it is a graph. */
let graph: GraphInfo | undefined;

function say(text: string, { error = false } = {}): void {
  elements.status.textContent = text;
  elements.status.classList.toggle('error-text', error);
}

/** Shows a failure; a 401 asks for the key. */
function fail(error: unknown): void {
  if (error instanceof UnauthorizedError) {
    elements.keyForm.hidden = false;
    say('This server needs an API key: enter it above.', { error: true });
    elements.keyInput.focus();
    return;
  }
  say(error instanceof Error ? error.message : String(error), { error: true });
}

function renderTimeline(): void {
  elements.turns.replaceChildren(
    ...turns.map((turn, index) => renderTurn(turn, index, { langfuseUrl, agentCount })),
  );
  renderGraphPath();
}

/** The graph and path drawn last, so that an event that changes neither leaves the drawing alone. */
let drawnPath: { graph: GraphInfo; path: string } | undefined;

/** Draws the graph with the path of the latest turn marked (again only when the path changed). */
function renderGraphPath(): void {
  if (!graph) return;
  const taken = pathOf(turns.at(-1)?.steps ?? []);
  const path = [...taken].join('\n');
  if (drawnPath?.graph === graph && drawnPath.path === path) return;
  drawnPath = { graph, path };
  elements.graphSection.hidden = false;
  elements.graph.replaceChildren(renderGraph(graph, taken));
}

function renderMessages(messages: readonly MessageItem[]): void {
  elements.messages.replaceChildren(
    ...messages.map((message) =>
      message.role === 'tool'
        ? messageItem(`agent${message.status === 'error' ? ' failed' : ''}`, message.content, message.name)
        : messageItem(message.role, message.content, message.role === 'user' ? 'you' : 'assistant'),
    ),
  );
}

function renderApprovals(approvals: readonly Approval[]): void {
  elements.approvalsSection.hidden = approvals.length === 0;
  elements.approvals.replaceChildren(
    ...approvals.map((approval) =>
      approvalItem(approval, async (decision) => {
        if (!sessionId) return;
        try {
          say(`${decision === 'approve' ? 'Approving' : 'Rejecting'} the call to ${approval.agent}…`);
          await api.resolveApproval(sessionId, approval.id, decision);
          await openSession(sessionId);
          say(`${decision === 'approve' ? 'Approved' : 'Rejected'}.`);
        } catch (error) {
          fail(error);
        }
      }),
    ),
  );
}

async function loadSessions(): Promise<void> {
  const sessions = await recentSessions(api);
  elements.sessions.replaceChildren(
    ...(sessions.length === 0
      ? [h('li', { class: 'muted', text: 'No sessions yet' })]
      : sessions.map((session) =>
          h(
            'li',
            {},
            h(
              'button',
              {
                type: 'button',
                class: 'session',
                'data-session-id': session.sessionId,
                'aria-current': session.sessionId === sessionId ? 'true' : undefined,
                onclick: () => void openSession(session.sessionId).catch(fail),
              },
              h('span', { class: 'title', text: session.title ?? session.sessionId }),
              session.updatedAt
                ? h('time', {
                    datetime: session.updatedAt,
                    text: new Date(session.updatedAt).toLocaleString(),
                  })
                : null,
            ),
          ),
        )),
  );
}

/** True once `GET /v1/agents` answered with stats: they are read again after each turn. */
let agentStatsKept = false;

async function loadAgents(): Promise<void> {
  const body = await api.agents();
  const { agents, stats } = body;
  agentCount = agents.length;
  agentStatsKept = stats !== undefined;
  if (body.graph?.mermaid !== graph?.mermaid) {
    graph = body.graph;
    renderGraphPath();
  }
  elements.agents.replaceChildren(
    ...agents.map((agent) =>
      h(
        'li',
        { class: 'agent-card' },
        h('strong', { text: agent.name }),
        agent.requiresApproval
          ? h('span', { class: 'badge awaiting_approval', text: 'needs approval' })
          : null,
        h('p', { text: agent.description }),
        agent.keywords?.length
          ? h('p', { class: 'keywords muted', text: `Keywords: ${agent.keywords.join(', ')}` })
          : null,
        agentStatsLine(stats?.[agent.name]),
      ),
    ),
  );
}

/** The pages of the open session's history shown so far, merged: the newest and any older ones loaded. */
let shown: SessionBody | undefined;

function showSession(body: SessionBody): void {
  shown = body;
  renderMessages(body.messages);
  turns = body.turns.map((turn) => turnFromRecord(turn, body.messages));
  renderTimeline();
  renderApprovals(body.pendingApprovals);
  elements.loadOlder.hidden = body.before === undefined;
}

/** Prepends the page of messages just before the oldest one shown. */
async function loadOlder(): Promise<void> {
  if (!sessionId || !shown?.before) return;
  const id = sessionId;
  elements.loadOlder.disabled = true;
  try {
    const older = await api.session(id, { before: shown.before });
    if (id !== sessionId || !shown) return;
    const merged = mergePages(older, shown);
    const added = merged.messages.length - shown.messages.length;
    showSession(merged);
    // Keep the reader where they were: at the message that was the oldest one.
    elements.messages.children[added]?.scrollIntoView({ block: 'start' });
    say(`Loaded ${older.messages.length} older messages.`);
  } finally {
    elements.loadOlder.disabled = false;
  }
}

function setSession(id: string | undefined): void {
  sessionId = id;
  elements.sessionLabel.textContent = id ? `· ${id}` : '· new session';
  if (id) history.replaceState(null, '', `#session=${encodeURIComponent(id)}`);
  else history.replaceState(null, '', window.location.pathname + window.location.search);
}

/** Stops following a running turn (another session opens, or the same one again, followed anew). */
function stopFollowing(): void {
  if (!following) return;
  following.stop.abort();
  following = undefined;
  busy = false;
  elements.send.disabled = false;
}

async function openSession(id: string): Promise<void> {
  const body = await api.session(id);
  stopFollowing();
  setSession(id);
  showSession(body);
  rememberSession(id, body.messages.find((m) => m.role === 'user')?.content);
  await loadSessions();
  say(`Opened session ${id}.`);
  const running = body.activeTurn?.status === 'running' ? body.activeTurn.turnId : undefined;
  if (running) {
    const text = body.messages.findLast((message) => message.role === 'user')?.content ?? '';
    void rejoin(id, running, text);
  }
}

function newSession(): void {
  setSession(undefined);
  shown = undefined;
  elements.loadOlder.hidden = true;
  turns = [];
  renderTimeline();
  renderMessages([]);
  renderApprovals([]);
  void loadSessions().catch(fail);
  say('New session: the first message starts it.');
  elements.message.focus();
}

/** Shows a turn's events as they come in this page (see {@link followEvents}). */
function liveView(text: string) {
  return followEvents(text, {
    messages: elements.messages,
    turns: () => turns,
    started: (id) => {
      if (!sessionId) setSession(id);
    },
    renderTimeline,
    say,
  });
}

/** Shows the session as stored once a turn is over: durations and replies as the server kept them. */
async function showStored(id: string, text: string): Promise<void> {
  rememberSession(id, text);
  const newest = await api.session(id);
  if (id !== sessionId) return;
  // Older pages already loaded stay on screen.
  showSession(shown?.sessionId === id ? mergePages(shown, newest) : newest);
  await loadSessions();
  if (agentStatsKept) await loadAgents();
}

/** Queues the message as a background turn: shows the 202 receipt, and the turn in the Background panel. */
async function queue(text: string): Promise<void> {
  elements.send.disabled = true;
  try {
    const receipt = await background.queue(text, sessionId);
    rememberSession(receipt.sessionId, text);
    await loadSessions();
  } catch (error) {
    fail(error);
  } finally {
    elements.send.disabled = busy;
  }
}

async function send(text: string): Promise<void> {
  busy = true;
  elements.send.disabled = true;
  elements.messages.append(messageItem('user', text, 'you'));
  const view = liveView(text);
  try {
    try {
      await api.chat(sessionId ? { message: text, sessionId } : { message: text }, view.onEvent);
    } catch (error) {
      // The connection dropped mid-turn: the turn runs on at the server; pick its stream up where it was.
      const { turnId, lastEventId } = view.where;
      if (!(error instanceof TypeError) || !sessionId || !turnId) throw error;
      say('Connection lost: rejoining the turn…');
      await followTurn(api, sessionId, turnId, lastEventId, view.onEvent);
    }
    if (sessionId) await showStored(sessionId, text);
    say('Reply received.');
  } catch (error) {
    fail(error);
  } finally {
    busy = false;
    elements.send.disabled = false;
  }
}

/** Follows a turn that is running as the session opens (after a reload, say) until it ends. */
async function rejoin(id: string, turnId: string, text: string): Promise<void> {
  const mine = { turnId, stop: new AbortController() };
  following = mine;
  busy = true;
  elements.send.disabled = true;
  try {
    say('A turn is running: following it…');
    await followTurn(api, id, turnId, undefined, liveView(text).onEvent, mine.stop.signal);
    if (id === sessionId) await showStored(id, text);
    say('Reply received.');
  } catch (error) {
    if (!mine.stop.signal.aborted) fail(error);
  } finally {
    if (following === mine) {
      following = undefined;
      busy = false;
      elements.send.disabled = false;
    }
  }
}

/** A background turn of the open session ended: shows the session as stored (a turn followed here shows itself). */
async function backgroundEnded(turn: BackgroundTurnInfo): Promise<void> {
  if (turn.sessionId !== sessionId || busy) return;
  const newest = await api.session(turn.sessionId);
  if (turn.sessionId !== sessionId || busy) return;
  showSession(shown?.sessionId === turn.sessionId ? mergePages(shown, newest) : newest);
}

const background = BackgroundPanel.mount(api, {
  say,
  fail,
  openSession: (id) => void openSession(id).catch(fail),
  ended: (turn) => void backgroundEnded(turn).catch(fail),
});

elements.chatForm.addEventListener('submit', (event) => {
  event.preventDefault();
  const text = elements.message.value.trim();
  if (!text) return;
  if (elements.inBackground.checked) {
    elements.message.value = '';
    void queue(text);
    return;
  }
  if (busy) return;
  elements.message.value = '';
  void send(text);
});
elements.message.addEventListener('keydown', (event) => {
  if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
    event.preventDefault();
    elements.chatForm.requestSubmit();
  }
});
elements.newSession.addEventListener('click', newSession);
elements.loadOlder.addEventListener('click', () => void loadOlder().catch(fail));
elements.keyForm.addEventListener('submit', (event) => {
  event.preventDefault();
  api.key = elements.keyInput.value.trim();
  elements.keyInput.value = '';
  elements.keyForm.hidden = true;
  say('Key saved for this tab.');
  void start();
});

async function start(): Promise<void> {
  try {
    await Promise.all([loadAgents(), configEditor.load()]);
    const fromHash = /^#session=(.+)$/.exec(window.location.hash)?.[1];
    if (fromHash) await openSession(decodeURIComponent(fromHash));
    else newSession();
  } catch (error) {
    fail(error);
  }
}

void start();
