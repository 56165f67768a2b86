import type { StepAnnotations } from '@switchboard/core';
import type { TurnStatus } from '../turns/turn-record.js';
import type { EvalExpectation } from './dataset.js';

/** The label of a first decision that failed (an `ErrorMessage`, or no decision before a timeout). */
export const ERROR_LABEL = '(error)';

/** What the turn's first routing decision was. */
export interface FirstDecision {
  /** `call`, `fan-out`, `answer`, `error`, or `none` when the turn made no decision. */
  kind: 'call' | 'fan-out' | 'answer' | 'error' | 'none';
  /** The agents called, in call order (empty for an answer or an error). */
  agents: string[];
  /** The confusion-matrix label: the agents sorted and joined by `+`, `(no agent)` or `(error)`. */
  label: string;
  thought?: string;
  reason?: string;
  /** The error code (or message) of an `error` decision. */
  error?: string;
  /** What patterns and rails recorded on the step. */
  annotations?: StepAnnotations;
}

/** How one case went. */
export interface CaseResult {
  id: string;
  /** `file:line` of the case. */
  source?: string;
  tags?: string[];
  /** The user message the case sent. */
  message: string;
  expect: EvalExpectation;
  /** True when every expectation of the case held. */
  passed: boolean;
  /** One sentence per expectation that did not hold. */
  failures: string[];
  /** How the turn ended, or `timeout` when it outlived the case's timeout. */
  status: TurnStatus | 'timeout';
  first: FirstDecision;
  /** Every agent the turn called, in call order. */
  trajectory: string[];
  /** What the user was answered. */
  reply: string;
  /** The agents the first decision could choose from (besides answering the user). */
  candidates?: string[];
  /** Wall time of the turn, in milliseconds. */
  latencyMs: number;
  /** Tokens of the turn's model calls (routers' and agents'), when any reported usage. */
  tokens?: { input: number; output: number };
  /** What went wrong running the case (not a routing miss): a thrown error's message. */
  error?: string;
}

/** Precision, recall and F1 of one label over the cases that state a first-decision agent. */
export interface AgentScore {
  precision: number;
  recall: number;
  f1: number;
  /** Cases that expected this agent. */
  support: number;
}

/** The scores of a run. Rates are between 0 and 1; a rate over no case is 0. */
export interface EvalMetrics {
  cases: number;
  passed: number;
  failed: number;
  /** Cases whose every expectation held, over all cases. */
  accuracy: number;
  /** Over the cases that state `expect.agent`: the first decision's agents were the expected ones. */
  routing: { cases: number; correct: number; accuracy: number };
  /** Per label (agent, `(no agent)`, `(error)`, or a `a+b` fan-out) seen as expected or decided. */
  perAgent: Record<string, AgentScore>;
  /** `matrix[expected][decided]`, counts of cases, both indexed like `labels`. */
  confusion: { labels: string[]; matrix: number[][] };
  /** Over the cases that state `expect.trajectory`: the same path exactly, and the expected path in order. */
  trajectory: { cases: number; exactMatch: number; inOrder: number };
  latencyMs: { p50: number; p95: number; max: number };
  tokens: { input: number; output: number; perCase: number };
  timeouts: number;
}

/** The outcome of {@link runEval}: serialisable as JSON, comparable with {@link diffReports}. */
export interface EvalReport {
  /** The report format's version. */
  version: 1;
  dataset: string;
  orchestrator: string;
  /** True when every agent was replaced by a stub that echoes its name. */
  stubAgents: boolean;
  startedAt: string;
  durationMs: number;
  metrics: EvalMetrics;
  /** One per case, in dataset order. */
  results: CaseResult[];
}
