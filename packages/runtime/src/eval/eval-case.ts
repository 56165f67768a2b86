import { createId, type MessageItem } from '@switchboard/core';
import type { App } from '../app.js';
import type { TurnResult } from '../engine/turn-types.js';
import type { RouteStep } from '../turns/turn-record.js';
import { agentLabel, type EvalCase, expectedAgents } from './dataset.js';
import { inOrder, sameSequence, sameSet } from './eval-metrics.js';
import { type CaseResult, ERROR_LABEL, type FirstDecision } from './eval-report.js';

/** How long a timed-out turn may take to stop once cancelled before the case gives up on it. */
const CANCEL_GRACE_MS = 1_000;

/** The first routing decision of a turn's steps (notes skipped). */
export function firstDecision(steps: readonly RouteStep[]): FirstDecision {
  const step = steps.find((candidate) => candidate.kind !== 'note');
  if (!step) return { kind: 'none', agents: [], label: ERROR_LABEL };
  const decision: FirstDecision = {
    kind: step.kind as FirstDecision['kind'],
    agents: [],
    label: ERROR_LABEL,
  };
  if (step.kind === 'call' || step.kind === 'fan-out') {
    decision.agents = step.calls.map((call) => call.agent);
    decision.label = agentLabel(decision.agents);
  } else if (step.kind === 'answer') decision.label = agentLabel(null);
  else if (step.error !== undefined) decision.error = step.error;
  const call = step.calls[0];
  if (call?.thought !== undefined) decision.thought = call.thought;
  if (call?.reason !== undefined) decision.reason = call.reason;
  if (step.annotations) decision.annotations = step.annotations;
  return decision;
}

/** Every agent the steps called, in call order. */
export function trajectoryOf(steps: readonly RouteStep[]): string[] {
  return steps.flatMap((step) =>
    step.kind === 'call' || step.kind === 'fan-out' ? step.calls.map((call) => call.agent) : [],
  );
}

/** One sentence per expectation of `testCase` that the outcome does not meet. */
export function judge(
  testCase: EvalCase,
  outcome: Pick<CaseResult, 'first' | 'trajectory' | 'status' | 'reply'>,
): string[] {
  const { expect } = testCase;
  const failures: string[] = [];
  const expected = expectedAgents(expect);
  if (expected !== undefined && agentLabel(expected) !== outcome.first.label)
    failures.push(`first decision: expected ${agentLabel(expected)}, got ${outcome.first.label}`);
  if (expect.trajectory) {
    const mode = expect.trajectoryMatch ?? 'exact';
    const match = { exact: sameSequence, 'in-order': inOrder, set: sameSet }[mode];
    if (!match(expect.trajectory, outcome.trajectory))
      failures.push(
        `trajectory (${mode}): expected [${expect.trajectory.join(', ')}], got [${outcome.trajectory.join(', ')}]`,
      );
  }
  if (expect.status !== undefined && expect.status !== outcome.status)
    failures.push(`status: expected ${expect.status}, got ${outcome.status}`);
  const reply = outcome.reply.toLowerCase();
  const texts = expect.contains === undefined ? [] : [expect.contains].flat();
  for (const text of texts)
    if (!reply.includes(text.toLowerCase())) failures.push(`answer: expected to contain "${text}"`);
  return failures;
}

/** The case's prior conversation as stored messages (all but the last, which is sent as the turn's message). */
function priorMessages(testCase: EvalCase): { prior: MessageItem[]; message: string } {
  if (typeof testCase.input === 'string') return { prior: [], message: testCase.input };
  const createdAt = new Date(0).toISOString();
  const prior = testCase.input.slice(0, -1).map((item): MessageItem => {
    const id = createId('msg');
    return item.role === 'user'
      ? { id, role: 'user', content: item.content, createdAt }
      : { id, role: 'assistant', content: item.content, toolCallId: createId('call'), createdAt };
  });
  return { prior, message: (testCase.input.at(-1) as { content: string }).content };
}

/** Runs `turn`; past `timeoutMs`, cancels it and resolves with what it had done once stopped, if anything. */
async function withTimeout(
  app: App,
  sessionId: string,
  turn: Promise<TurnResult>,
  timeoutMs: number,
): Promise<{ turn?: TurnResult; timedOut: boolean }> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), timeoutMs);
  });
  try {
    const result = await Promise.race([turn, expired]);
    if (result) return { turn: result, timedOut: false };
  } finally {
    clearTimeout(timer);
  }
  const last = await app.sessions.lastTurn(sessionId);
  if (last) await app.cancelTurn({ sessionId, turnId: last.turnId }).catch(() => undefined);
  const stopped = await Promise.race([
    turn.catch(() => undefined),
    new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), CANCEL_GRACE_MS).unref()),
  ]);
  return stopped ? { turn: stopped, timedOut: true } : { timedOut: true };
}

/** Runs one case through `app` in session `sessionId` and judges it. */
export async function runCase(
  app: App,
  testCase: EvalCase,
  sessionId: string,
  timeoutMs: number,
  candidates: string[],
): Promise<CaseResult> {
  const { prior, message } = priorMessages(testCase);
  const result: CaseResult = {
    id: testCase.id,
    message,
    expect: testCase.expect,
    passed: false,
    failures: [],
    status: 'failed',
    first: firstDecision([]),
    trajectory: [],
    reply: '',
    latencyMs: 0,
  };
  if (testCase.source !== undefined) result.source = testCase.source;
  if (testCase.tags) result.tags = testCase.tags;
  const started = performance.now();
  try {
    if (prior.length > 0) await app.sessions.append(sessionId, prior);
    const { turn, timedOut } = await withTimeout(
      app,
      sessionId,
      Promise.resolve(app.chat({ sessionId, message })),
      timeoutMs,
    );
    result.latencyMs = performance.now() - started;
    if (turn) {
      result.first = firstDecision(turn.steps);
      result.trajectory = trajectoryOf(turn.steps);
      result.reply = turn.reply;
      result.status = turn.status;
      if (turn.usage) result.tokens = { input: turn.usage.inputTokens, output: turn.usage.outputTokens };
    }
    if (timedOut) result.status = 'timeout';
  } catch (error) {
    result.latencyMs = performance.now() - started;
    result.error = error instanceof Error ? error.message : String(error);
  }
  result.failures = judge(testCase, result);
  if (result.status === 'timeout') result.failures.unshift(`timed out after ${timeoutMs} ms`);
  if (result.error !== undefined) result.failures.unshift(`the turn threw: ${result.error}`);
  result.passed = result.failures.length === 0;
  if (!result.passed) result.candidates = candidates;
  return result;
}
