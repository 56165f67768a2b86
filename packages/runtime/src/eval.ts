/**
 * `@switchboard/runtime/eval`: routing evals. Datasets of labelled cases
 * (JSONL, or YAML with the optional `yaml` package), {@link runEval} to
 * score an app's orchestrator on them in process, {@link diffReports} to
 * compare two runs, {@link expectRouting} for tests, and {@link replaySessions}
 * to re-decide recorded sessions with another orchestrator.
 *
 * @module
 */
export {
  agentLabel,
  DATASET_LIMITS,
  type Dataset,
  type EvalCase,
  type EvalCaseInput,
  EvalCaseSchema,
  type EvalExpectation,
  type EvalMessage,
  expectedAgents,
  NO_AGENT,
} from './eval/dataset.js';
export { DatasetError, loadDataset, type ParseDatasetOptions, parseDataset } from './eval/dataset-parse.js';
export { firstDecision, trajectoryOf } from './eval/eval-case.js';
export {
  type AgentChange,
  type DiffOptions,
  diffReports,
  type FlippedCase,
  type GatedMetric,
  gatedValue,
  type ReportDiff,
} from './eval/eval-diff.js';
export { computeMetrics, quantile } from './eval/eval-metrics.js';
export {
  type AgentScore,
  type CaseResult,
  ERROR_LABEL,
  type EvalMetrics,
  type EvalReport,
  type FirstDecision,
} from './eval/eval-report.js';
export {
  describeCase,
  expectRouting,
  type RoutingExpectation,
  RoutingScoreError,
  type RoutingThresholds,
  worstCases,
} from './eval/expect-routing.js';
export { type Disagreement, type ReplayOptions, type ReplayReport, replaySessions } from './eval/replay.js';
export { type EvalTarget, type RunEvalOptions, runEval } from './eval/run-eval.js';
export {
  parseSessionExport,
  type RecordedSession,
  readRecordedSession,
  SESSION_EXPORT_VERSION,
  sessionExportLines,
} from './eval/session-export.js';
export { stubAgent } from './eval/stub-agents.js';
