import type {
  Attributes,
  Counter,
  Histogram,
  Meter,
  ObservableGauge,
  ObservableResult,
} from '@opentelemetry/api';
import type { AgentStatsTable } from '@switchboard/core';

/** The name of the meter Switchboard records its metrics with. */
export const METER_NAME = 'switchboard';

/** Latency buckets in seconds: from a synchronous agent to a long multi-agent turn. */
const SECONDS_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
/** The error codes of a call stopped from outside rather than failed by its agent. */
const STOPPED_CODES = new Set(['turn_interrupted', 'server_shutdown', 'agent_stopped']);
const DECISION_BUCKETS = [1, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30];

/**
 * The engine's metrics, made once per app from one meter. Attributes stay
 * low-cardinality: the app and orchestrator names, a status, an agent name,
 * an error code; never a session, turn or user id. Without a meter provider
 * the instruments are OpenTelemetry's no-ops, so recording costs next to nothing.
 */
export class EngineMetrics {
  readonly #turns: Counter;
  readonly #turnDuration: Histogram;
  readonly #decisions: Histogram;
  readonly #agentDuration: Histogram;
  readonly #agentErrors: Counter;
  readonly #leases: ObservableGauge;
  readonly #successRate: ObservableGauge;
  readonly #latency: ObservableGauge;
  readonly #base: Attributes;
  /** Attribute sets by status or agent, made once rather than per turn or call. */
  readonly #attributes = new Map<string, Attributes>();

  /** `base` holds the attributes every measurement carries (`app`, `orchestrator`). */
  constructor(meter: Meter, base: Attributes) {
    this.#base = base;
    this.#turns = meter.createCounter('switchboard.turns', {
      description: 'Turns that ended or paused, by status',
      unit: '{turn}',
    });
    this.#turnDuration = meter.createHistogram('switchboard.turn.duration', {
      description:
        'Time from the start of a turn to its end, by status (a turn that waited for approval includes the wait)',
      unit: 's',
      advice: { explicitBucketBoundaries: SECONDS_BUCKETS },
    });
    this.#decisions = meter.createHistogram('switchboard.turn.decisions', {
      description: 'Orchestrator decisions per ended turn',
      unit: '{decision}',
      advice: { explicitBucketBoundaries: DECISION_BUCKETS },
    });
    this.#agentDuration = meter.createHistogram('switchboard.agent.duration', {
      description: 'Time an agent call took (retries included), by agent and status (ok, error, cancelled)',
      unit: 's',
      advice: { explicitBucketBoundaries: SECONDS_BUCKETS },
    });
    this.#agentErrors = meter.createCounter('switchboard.agent.errors', {
      description:
        'Agent calls that failed, by agent and error code (calls stopped by an interrupt are not errors)',
      unit: '{call}',
    });
    this.#leases = meter.createObservableGauge('switchboard.leases.held', {
      description: 'Session leases this process holds (turns running here)',
      unit: '{lease}',
    });
    this.#successRate = meter.createObservableGauge('switchboard.agent.success_rate', {
      description:
        "Share of an agent's recent calls that replied ok (withBreaker's sliding window, over the tenants this process serves)",
    });
    this.#latency = meter.createObservableGauge('switchboard.agent.latency', {
      description: "An agent's recent call latency at a quantile (0.5, 0.95), as withBreaker keeps it",
      unit: 's',
    });
  }

  /**
   * Records a turn that ended, or paused for approval (counted, not timed):
   * `startedAt` is the turn's ISO start time, `decisions` its decision count.
   */
  turnEnded(status: string, startedAt: string, decisions: number): void {
    const attributes = this.#cached(status, () => ({ ...this.#base, status }));
    this.#turns.add(1, attributes);
    if (status === 'awaiting_approval') return;
    const started = Date.parse(startedAt);
    if (!Number.isNaN(started))
      this.#turnDuration.record(Math.max(0, Date.now() - started) / 1000, attributes);
    this.#decisions.record(decisions, attributes);
  }

  /**
   * Records an agent call that ended after `durationMs`; a failure counts its
   * error code. A call stopped from outside (its turn interrupted or
   * cancelled, the server shutting down) is status `cancelled` and no agent error.
   */
  callEnded(
    agent: string,
    outcome: 'ok' | 'error' | 'cancelled',
    durationMs: number,
    errorCode?: string,
  ): void {
    const status = errorCode !== undefined && STOPPED_CODES.has(errorCode) ? 'cancelled' : outcome;
    const attributes = this.#cached(`${status}\n${agent}`, () => ({ ...this.#base, agent, status }));
    this.#agentDuration.record(durationMs / 1000, attributes);
    if (errorCode === undefined || status === 'cancelled') return;
    const errors = this.#cached(`error.code\n${agent}\n${errorCode}`, () => ({
      ...this.#base,
      agent,
      'error.code': errorCode,
    }));
    this.#agentErrors.add(1, errors);
  }

  /** Reports `count()` as the held-lease gauge at each collection; returns the function that stops it. */
  watchLeases(count: () => number): () => void {
    const callback = (result: { observe(value: number, attributes?: Attributes): void }) =>
      result.observe(count(), this.#base);
    this.#leases.addCallback(callback);
    return () => this.#leases.removeCallback(callback);
  }

  /**
   * Reports `read()` — the agents' windowed stats a breaker keeps — as the
   * success-rate and latency gauges at each collection (only then is it
   * read, from the process's copy: no store read); returns the function that stops it.
   */
  watchAgentStats(read: () => AgentStatsTable): () => void {
    const successRate = (result: ObservableResult) => {
      for (const [agent, stats] of Object.entries(read()))
        result.observe(
          stats.successRate,
          this.#cached(`stats\n${agent}`, () => ({ ...this.#base, agent })),
        );
    };
    const latency = (result: ObservableResult) => {
      for (const [agent, stats] of Object.entries(read()))
        for (const [quantile, ms] of [
          ['0.5', stats.p50Ms],
          ['0.95', stats.p95Ms],
        ] as const)
          if (ms !== undefined)
            result.observe(
              ms / 1000,
              this.#cached(`latency\n${agent}\n${quantile}`, () => ({ ...this.#base, agent, quantile })),
            );
    };
    this.#successRate.addCallback(successRate);
    this.#latency.addCallback(latency);
    return () => {
      this.#successRate.removeCallback(successRate);
      this.#latency.removeCallback(latency);
    };
  }

  #cached(key: string, make: () => Attributes): Attributes {
    let attributes = this.#attributes.get(key);
    if (!attributes) {
      attributes = make();
      // Agent names and error codes are finite, but a bound keeps an odd agent from growing the map forever.
      if (this.#attributes.size < 1_000) this.#attributes.set(key, attributes);
    }
    return attributes;
  }
}
