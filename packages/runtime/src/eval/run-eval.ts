import { ConfigurationError, type Orchestrator } from '@switchboard/core';
import type { Agent } from '../agents/agent-contract.js';
import { App, type AppOptions, type OrchestratorInput } from '../app.js';
import type { Dataset } from './dataset.js';
import { runCase } from './eval-case.js';
import { computeMetrics } from './eval-metrics.js';
import type { CaseResult, EvalReport } from './eval-report.js';
import { stubAgent } from './stub-agents.js';

/** What to evaluate: a mounted app, or an orchestrator and the agents it routes to. */
export type EvalTarget = App | { orchestrator: OrchestratorInput; agents: readonly Agent[]; name?: string };

/** Options of {@link runEval}. */
export interface RunEvalOptions {
  /** Replace every agent with a stub that answers its own name, so only routing runs (default false). */
  stubAgents?: boolean;
  /** Cases run at once (default 1: a stateful router sees the cases in dataset order). */
  concurrency?: number;
  /** A case whose turn runs longer is cancelled and fails as `timeout` (default 30 000 ms). */
  timeoutMs?: number;
  /** Called after each case, e.g. to draw a progress bar. */
  onProgress?: (done: number, total: number, result: CaseResult) => void;
  /** Turn options of the app the cases run in (max hops, profiles, guardrails…); its stores are always new and in memory. */
  appOptions?: Partial<Omit<AppOptions, 'name' | 'agents' | 'sessionStore' | 'memoryStore'>>;
}

function targetParts(target: EvalTarget): { orchestrator: OrchestratorInput; agents: readonly Agent[] } {
  if (target instanceof App) {
    const orchestrator: Orchestrator | undefined = target.orchestrator;
    if (!orchestrator)
      throw new ConfigurationError({
        message: `App '${target.name}' has no orchestrator: mount() it before evaluating it`,
      });
    return { orchestrator, agents: target.agents };
  }
  return target;
}

/** The agent as the eval app holds it: closing the eval app must not close the target's agents. */
function borrowed(agent: Agent): Agent {
  if (agent.close === undefined) return agent;
  const view: Agent = Object.create(agent);
  view.close = undefined;
  return view;
}

/**
 * Runs every case of `dataset` through the target's orchestrator, in
 * process, each in a session of its own of a new in-memory app (with the
 * target's agents, or stubs of them with `stubAgents`), and scores the
 * routing: accuracy, per-agent precision/recall/F1, the confusion matrix,
 * trajectories, latency and tokens. Results come in dataset order whatever
 * the concurrency, and are the same from run to run given the same
 * orchestrator and model answers (latency aside).
 *
 * @example
 * ```ts
 * const report = await runEval(app, await loadDataset('evals/routing.jsonl'), { stubAgents: true });
 * console.log(report.metrics.accuracy, report.metrics.confusion);
 * ```
 */
export async function runEval(
  target: EvalTarget,
  dataset: Dataset,
  {
    stubAgents = false,
    concurrency = 1,
    timeoutMs = 30_000,
    onProgress,
    appOptions = {},
  }: RunEvalOptions = {},
): Promise<EvalReport> {
  if (!Number.isInteger(concurrency) || concurrency < 1)
    throw new ConfigurationError({ message: `concurrency must be a positive integer, not ${concurrency}` });
  if (!(timeoutMs > 0))
    throw new ConfigurationError({ message: `timeoutMs must be positive, not ${timeoutMs}` });
  const parts = targetParts(target);
  const agents = stubAgents ? parts.agents.map(stubAgent) : parts.agents.map(borrowed);
  const name = target instanceof App ? target.name : (target.name ?? 'eval');
  const app = new App({ logLevel: 'silent', ...appOptions, name, agents }).mount(parts.orchestrator);
  const orchestrator = app.orchestrator as Orchestrator;
  const candidates = orchestrator.agents.map((agent) => agent.name);
  const startedAt = new Date();
  const started = performance.now();
  const results: CaseResult[] = new Array(dataset.cases.length);
  let next = 0;
  let done = 0;
  const worker = async () => {
    while (next < dataset.cases.length) {
      const index = next++;
      const result = await runCase(app, dataset.cases[index]!, `eval-${index}`, timeoutMs, candidates);
      results[index] = result;
      done += 1;
      onProgress?.(done, dataset.cases.length, result);
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(concurrency, dataset.cases.length) }, worker));
  } finally {
    await app.close();
  }
  return {
    version: 1,
    dataset: dataset.name,
    orchestrator: orchestrator.name,
    stubAgents,
    startedAt: startedAt.toISOString(),
    durationMs: performance.now() - started,
    metrics: computeMetrics(results),
    results,
  };
}
