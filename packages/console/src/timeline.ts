import { formatDuration, h, preview } from './dom.js';
import type { MessageItem, RouteStep, StepCall, StreamEvent, TurnRecord } from './types.js';

/** A call as the timeline shows it: the decision's call plus how the agent answered. */
export interface CallView extends StepCall {
  state: 'running' | 'ok' | 'error' | 'answer';
  output: string;
  durationMs?: number;
  startedAt?: number;
}

/** A routing decision as the timeline shows it. */
export interface StepView extends Omit<RouteStep, 'calls'> {
  calls: CallView[];
}

/** A turn as the timeline shows it, built from a stored turn or from the live stream. */
export interface TurnView {
  turnId: string;
  status: string;
  message?: string;
  steps: StepView[];
  traceId?: string;
  error?: string;
}

const ROUTE_TO_USER = 'route_to_user';

/** Builds the timeline of a stored turn; the session's messages give each call's answer and timing. */
export function turnFromRecord(turn: TurnRecord, messages: readonly MessageItem[]): TurnView {
  const byCall = new Map(messages.filter((m) => m.toolCallId).map((m) => [m.toolCallId, m]));
  const view: TurnView = {
    turnId: turn.turnId,
    status: turn.status,
    steps: turn.steps.map((step) => ({
      ...step,
      calls: step.calls.map((call) => {
        const reply = byCall.get(call.toolCallId);
        const answer = call.agent === ROUTE_TO_USER;
        const view: CallView = {
          ...call,
          state: answer ? 'answer' : (reply?.status ?? call.status ?? 'running'),
          output: reply?.content ?? call.message ?? '',
        };
        // An agent runs from its decision to its reply.
        const decided = Date.parse(step.decidedAt);
        if (reply && !answer && Number.isFinite(decided))
          view.durationMs = Math.max(0, Date.parse(reply.createdAt) - decided);
        return view;
      }),
    })),
  };
  const message = messages.find((m) => m.id === turn.userMessageId);
  if (message) view.message = message.content;
  if (turn.traceId) view.traceId = turn.traceId;
  if (turn.error) view.error = `${turn.error.code}: ${turn.error.message}`;
  return view;
}

/** Applies one stream event to a live turn's timeline. */
export function applyEvent(view: TurnView, event: StreamEvent): void {
  const findCall = (id: string | undefined) => {
    for (const step of view.steps) for (const call of step.calls) if (call.toolCallId === id) return call;
    return undefined;
  };
  switch (event.type) {
    case 'route':
      if (event.step)
        view.steps.push({
          ...event.step,
          calls: event.step.calls.map((call) => ({
            ...call,
            state: call.agent === ROUTE_TO_USER ? 'answer' : 'running',
            output: call.message && call.agent === ROUTE_TO_USER ? call.message : '',
          })),
        });
      break;
    case 'agent-start': {
      const call = findCall(event.toolCallId);
      if (call) call.startedAt = performance.now();
      break;
    }
    case 'agent-delta': {
      const call = findCall(event.toolCallId);
      if (call) call.output += event.delta ?? '';
      break;
    }
    case 'agent-end': {
      const call = findCall(event.toolCallId);
      if (call) {
        call.state = event.status === 'error' ? 'error' : 'ok';
        call.output = event.content ?? call.output;
        if (call.startedAt !== undefined) call.durationMs = performance.now() - call.startedAt;
      }
      break;
    }
    case 'error':
      view.error = `${event.code ?? 'error'}: ${event.message ?? ''}`;
      break;
    case 'turn-end':
      view.status = event.status ?? view.status;
      if (event.traceId) view.traceId = event.traceId;
      break;
  }
}

const badge = (state: string) => h('span', { class: `badge ${state}`, text: state });

function renderCall(call: CallView): HTMLElement {
  const failed = call.state === 'error';
  return h(
    'article',
    { class: `call${failed ? ' failed' : ''}`, 'data-agent': call.agent },
    h(
      'header',
      {},
      h('strong', { class: 'agent', text: call.agent }),
      ' ',
      badge(call.state),
      call.durationMs !== undefined
        ? h('span', { class: 'muted', text: ` ${formatDuration(call.durationMs)}` })
        : null,
    ),
    call.reason
      ? h('p', { class: 'reason' }, h('span', { class: 'label', text: 'Reason: ' }), call.reason)
      : null,
    call.thought
      ? h('p', { class: 'thought' }, h('span', { class: 'label', text: 'Thought: ' }), call.thought)
      : null,
    call.output ? h('p', { class: 'output', text: preview(call.output) }) : null,
  );
}

/** What the timeline needs to know besides the turn. */
export interface TimelineContext {
  /** The Langfuse base URL: a traced turn links to its trace. */
  langfuseUrl?: string | undefined;
  /** How many agents the app hosts: a decision with no narrower list chose among all of them. */
  agentCount?: number | undefined;
}

/** The agents a decision could choose from: step rules narrow them (`allowedAgents`), else all of them. */
function candidates(step: StepView, agentCount: number | undefined): string | undefined {
  if (step.kind !== 'call' && step.kind !== 'fan-out') return undefined;
  const allowed = step.annotations?.allowedAgents;
  if (Array.isArray(allowed) && allowed.every((name) => typeof name === 'string'))
    return allowed.length > 0 ? allowed.join(', ') : 'none';
  return agentCount ? `all ${agentCount} agent${agentCount === 1 ? '' : 's'}` : undefined;
}

function renderAnnotations(annotations: Record<string, unknown> | undefined): HTMLElement | null {
  // The allowed agents are shown as the decision's candidates.
  const entries = Object.entries(annotations ?? {}).filter(([name]) => name !== 'allowedAgents');
  if (entries.length === 0) return null;
  const list = h('dl', { class: 'annotations' });
  for (const [name, value] of entries)
    list.append(
      h('dt', { text: name }),
      h('dd', { text: typeof value === 'string' ? value : JSON.stringify(value) }),
    );
  return list;
}

function renderStep(step: StepView, agentCount: number | undefined): HTMLElement {
  const chosen = step.calls.map((call) => call.agent).join(', ');
  const failed = step.kind === 'error';
  const among = candidates(step, agentCount);
  return h(
    'li',
    { class: `step ${step.kind}${failed ? ' failed' : ''}` },
    h(
      'div',
      { class: 'step-head' },
      h('span', { class: 'hop', text: `hop ${step.hop}` }),
      ' ',
      h('span', {
        class: 'kind',
        text: step.kind === 'note' && step.label ? `note: ${step.label}` : step.kind,
      }),
      chosen ? h('span', { class: 'chosen', text: ` → ${chosen}` }) : null,
      h('span', { class: 'muted', text: ` decided in ${formatDuration(step.durationMs)}` }),
    ),
    among
      ? h('p', { class: 'candidates' }, h('span', { class: 'label', text: 'Candidates: ' }), among)
      : null,
    step.error ? h('p', { class: 'error-text', text: step.error }) : null,
    renderAnnotations(step.annotations),
    step.calls.length > 0
      ? h(
          'div',
          {
            class: `calls${step.calls.length > 1 ? ' fan-out' : ''}`,
            role: 'group',
            'aria-label': `hop ${step.hop} calls`,
          },
          ...step.calls.map(renderCall),
        )
      : null,
  );
}

/** The timeline entry of one turn. */
export function renderTurn(
  view: TurnView,
  index: number,
  { langfuseUrl, agentCount }: TimelineContext = {},
): HTMLElement {
  const failed = ['failed', 'blocked'].includes(view.status) || view.error !== undefined;
  return h(
    'li',
    { class: `turn${failed ? ' failed' : ''}`, 'data-turn-id': view.turnId },
    h(
      'header',
      {},
      h('h3', { text: `Turn ${index + 1}` }),
      ' ',
      badge(view.status),
      view.traceId && langfuseUrl
        ? h('a', {
            class: 'trace',
            href: `${langfuseUrl.replace(/\/+$/, '')}/trace/${encodeURIComponent(view.traceId)}`,
            target: '_blank',
            rel: 'noopener noreferrer',
            text: 'Trace in Langfuse',
          })
        : view.traceId
          ? h('span', { class: 'muted trace-id', text: `trace ${view.traceId}` })
          : null,
    ),
    view.message ? h('p', { class: 'turn-message', text: preview(view.message, 80) }) : null,
    view.error ? h('p', { class: 'error-text', text: view.error }) : null,
    h('ol', { class: 'steps' }, ...view.steps.map((step) => renderStep(step, agentCount))),
  );
}
