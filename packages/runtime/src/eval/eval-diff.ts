import type { EvalMetrics, EvalReport } from './eval-report.js';

/** A case that passed in one report and failed in the other. */
export interface FlippedCase {
  id: string;
  message: string;
  /** The first decision's label in the baseline and in the candidate. */
  before: string;
  after: string;
  /** Why it fails now (for `broke`) or failed before (for `fixed`). */
  failures: string[];
}

/** How one agent's scores moved (candidate minus baseline). */
export interface AgentChange {
  agent: string;
  precision: number;
  recall: number;
  f1: number;
}

/** A metric a diff can gate on; rates between 0 and 1. */
export type GatedMetric = 'accuracy' | 'routing' | 'trajectoryExact' | 'trajectoryInOrder';

/** What changed from a baseline report to a candidate report (see {@link diffReports}). */
export interface ReportDiff {
  baseline: { orchestrator: string; dataset: string };
  candidate: { orchestrator: string; dataset: string };
  /** Candidate minus baseline, per gated metric. */
  deltas: Record<GatedMetric, number>;
  /** Passed in the baseline, failed in the candidate. */
  broke: FlippedCase[];
  /** Failed in the baseline, passed in the candidate. */
  fixed: FlippedCase[];
  /** Agents whose precision, recall or F1 moved, largest F1 drop first. */
  agents: AgentChange[];
  /** Case ids of one report only (the datasets differ). */
  onlyInBaseline: string[];
  onlyInCandidate: string[];
  /** Set when `maxDrop` was given: the metrics that dropped by more than it. */
  regressions?: { metric: GatedMetric; drop: number }[];
}

/** Options of {@link diffReports}. */
export interface DiffOptions {
  /** The metrics to gate on (default `['accuracy']`). */
  metrics?: readonly GatedMetric[];
  /** The largest drop (0–1, e.g. 0.02 for two points) a gated metric may take. */
  maxDrop?: number;
}

/** The value of a gated metric. */
export function gatedValue(metrics: EvalMetrics, metric: GatedMetric): number {
  switch (metric) {
    case 'accuracy':
      return metrics.accuracy;
    case 'routing':
      return metrics.routing.accuracy;
    case 'trajectoryExact':
      return metrics.trajectory.exactMatch;
    case 'trajectoryInOrder':
      return metrics.trajectory.inOrder;
  }
}

const GATED: readonly GatedMetric[] = ['accuracy', 'routing', 'trajectoryExact', 'trajectoryInOrder'];
// Rates are ratios of counts: anything smaller than this is a rounding artefact, not a change.
const EPSILON = 1e-9;

/**
 * Compares two reports of the same dataset: the cases that flipped from
 * right to wrong (`broke`) and back (`fixed`), each agent's score changes,
 * and, with `maxDrop`, the gated metrics that dropped by more than it —
 * a CI job fails when `regressions` is not empty.
 *
 * @example
 * ```ts
 * const diff = diffReports(baseline, candidate, { maxDrop: 0.02 });
 * if (diff.regressions?.length) process.exitCode = 1;
 * ```
 */
export function diffReports(
  baseline: EvalReport,
  candidate: EvalReport,
  { metrics = ['accuracy'], maxDrop }: DiffOptions = {},
): ReportDiff {
  const before = new Map(baseline.results.map((result) => [result.id, result]));
  const after = new Map(candidate.results.map((result) => [result.id, result]));
  const broke: FlippedCase[] = [];
  const fixed: FlippedCase[] = [];
  for (const result of candidate.results) {
    const old = before.get(result.id);
    if (!old || old.passed === result.passed) continue;
    const flip = {
      id: result.id,
      message: result.message,
      before: old.first.label,
      after: result.first.label,
      failures: result.passed ? old.failures : result.failures,
    };
    (result.passed ? fixed : broke).push(flip);
  }
  const names = new Set([
    ...Object.keys(baseline.metrics.perAgent),
    ...Object.keys(candidate.metrics.perAgent),
  ]);
  const zero = { precision: 0, recall: 0, f1: 0, support: 0 };
  const agents: AgentChange[] = [];
  for (const agent of names) {
    const old = baseline.metrics.perAgent[agent] ?? zero;
    const now = candidate.metrics.perAgent[agent] ?? zero;
    const change = {
      agent,
      precision: now.precision - old.precision,
      recall: now.recall - old.recall,
      f1: now.f1 - old.f1,
    };
    if ([change.precision, change.recall, change.f1].some((delta) => Math.abs(delta) > EPSILON))
      agents.push(change);
  }
  agents.sort((left, right) => left.f1 - right.f1);
  const deltas = Object.fromEntries(
    GATED.map((metric) => [
      metric,
      gatedValue(candidate.metrics, metric) - gatedValue(baseline.metrics, metric),
    ]),
  ) as Record<GatedMetric, number>;
  const diff: ReportDiff = {
    baseline: { orchestrator: baseline.orchestrator, dataset: baseline.dataset },
    candidate: { orchestrator: candidate.orchestrator, dataset: candidate.dataset },
    deltas,
    broke,
    fixed,
    agents,
    onlyInBaseline: [...before.keys()].filter((id) => !after.has(id)),
    onlyInCandidate: [...after.keys()].filter((id) => !before.has(id)),
  };
  if (maxDrop !== undefined)
    diff.regressions = metrics
      .map((metric) => ({ metric, drop: -deltas[metric] }))
      .filter(({ drop }) => drop > maxDrop + EPSILON);
  return diff;
}
