import { setTimeout as delay } from 'node:timers/promises';

/** What the desk knows about one topic, so that the example runs anywhere without a search API. */
export interface Topic {
  name: string;
  /** Background notes: a heading and a sentence each. */
  notes: readonly { heading: string; text: string }[];
  /** Key figures, one sentence each. */
  figures: readonly string[];
}

/** The topics the desk can write a briefing on. */
export const TOPICS: readonly Topic[] = [
  {
    name: 'honeybees',
    notes: [
      {
        heading: 'Colony life',
        text: 'A colony has one queen, a few hundred drones and tens of thousands of workers.',
      },
      { heading: 'Pollination', text: 'Bees pollinate many of the fruit and vegetable crops we eat.' },
      { heading: 'Threats', text: 'Varroa mites, pesticides and habitat loss weaken colonies.' },
    ],
    figures: [
      'A summer worker lives about 6 weeks',
      'A strong hive holds 20,000 to 60,000 bees',
      'A worker makes about 1/12 teaspoon of honey in her life',
    ],
  },
  {
    name: 'tides',
    notes: [
      {
        heading: 'Cause',
        text: "The Moon's gravity, and less so the Sun's, pulls the oceans into two bulges.",
      },
      { heading: 'Spring and neap tides', text: 'Tides are strongest when Sun and Moon line up.' },
      { heading: 'Tidal range', text: 'Coastlines and basins shape how high the water rises.' },
    ],
    figures: [
      'High tide comes about every 12 hours 25 minutes',
      "The Bay of Fundy's range reaches about 16 m",
      'The Moon moves away from the Earth by about 3.8 cm a year',
    ],
  },
];

/** The first topic of {@link TOPICS} named in `text`, if any. */
export function findTopic(text: string): Topic | undefined {
  return TOPICS.find((topic) => new RegExp(`\\b${topic.name}\\b`, 'i').test(text));
}

/** One agent run, with when it started and ended (`performance.now()`). */
export interface AgentRun {
  agent: string;
  /** The task text the agent received. */
  task: string;
  startedAt: number;
  endedAt?: number;
  failed?: boolean;
}

/** Options of {@link SimulatedDesk}. */
export interface SimulatedDeskOptions {
  /** How long each agent works, like a remote tool or a model would (default 200 ms). */
  latencyMs?: number;
  /** Agents whose source is down: their work fails after the latency (default none). */
  down?: Iterable<string>;
}

/**
 * Where the desk's agents do their (simulated) work: each run takes a short
 * while and is written in {@link runs}, so that a test (or the demo's log)
 * sees which step ran when. An agent listed in `down` fails as if its
 * source were unreachable.
 */
export class SimulatedDesk {
  /** Every run, in the order they started. */
  readonly runs: AgentRun[] = [];
  readonly #latencyMs: number;
  readonly #down: ReadonlySet<string>;

  constructor({ latencyMs = 200, down = [] }: SimulatedDeskOptions = {}) {
    this.#latencyMs = latencyMs;
    this.#down = new Set(down);
  }

  /** Runs `produce` for `agent` after the latency, recording the run. */
  async work<T>(agent: string, task: string, signal: AbortSignal, produce: () => T): Promise<T> {
    const run: AgentRun = { agent, task, startedAt: performance.now() };
    this.runs.push(run);
    try {
      await delay(this.#latencyMs, undefined, { signal });
      if (this.#down.has(agent)) throw new Error(`the ${agent} source is unavailable (HTTP 503)`);
      return produce();
    } catch (error) {
      run.failed = true;
      throw error;
    } finally {
      run.endedAt = performance.now();
    }
  }
}
