import { setTimeout as delay } from 'node:timers/promises';

/** One document of the library the `research` agent searches. */
export interface Source {
  title: string;
  url: string;
  text: string;
}

/**
 * The library, small and in-file so that the example runs anywhere without a
 * search API. One text carries its author's email address: the PII guardrail
 * redacts it from the agent's reply before anything stores or reads it.
 */
export const LIBRARY: readonly Source[] = [
  {
    title: 'Heat pumps in cold climates',
    url: 'https://energy.example/heat-pumps-cold',
    text: 'Modern air-source heat pumps keep heating down to about -25 °C, with a coefficient of performance near 2 at -15 °C. Questions to the author: m.weber@energy-lab.example.',
  },
  {
    title: 'How a heat pump works',
    url: 'https://energy.example/heat-pump-basics',
    text: 'A heat pump moves heat instead of making it: a refrigerant absorbs heat outdoors, a compressor raises its temperature, and the heat is released indoors.',
  },
  {
    title: 'Home batteries and solar panels',
    url: 'https://energy.example/home-batteries',
    text: 'A home battery stores midday solar power for the evening; a 10 kWh battery covers the evening use of a typical household.',
  },
  {
    title: 'Solar panels in winter',
    url: 'https://energy.example/solar-winter',
    text: 'Solar panels produce a fifth to a third of their summer output in a northern winter; snow slides off panels tilted at 35 degrees or more.',
  },
  {
    title: 'Small wind turbines',
    url: 'https://energy.example/small-wind',
    text: 'Small wind turbines need an average wind speed of at least 5 m/s to pay off, which few gardens have.',
  },
];

/** Words too common to say what a question is about. */
const STOP_WORDS = new Set(
  'a about an and any are at be can do does for from has have how i in is it its me much my of on or the their them they this to well what when where which who why will with work works you your'.split(
    ' ',
  ),
);

/** The words of `text` that say what it is about: lower case, without stop words and placeholders. */
export function topicWords(text: string): string[] {
  const words = text
    .replace(/\[[a-z]+\]/g, ' ')
    .toLowerCase()
    .match(/[a-z]+/g);
  return [...new Set((words ?? []).filter((word) => word.length > 2 && !STOP_WORDS.has(word)))];
}

/** True when `text` mentions `word` (one of {@link topicWords}), in the singular or the plural: `pumps` finds `pump`. */
export function mentions(text: string, word: string): boolean {
  const singular = word.endsWith('ss') ? word : word.replace(/s$/, '');
  return new RegExp(`\\b${singular}(?:s|es)?\\b`, 'i').test(text);
}

/** One request the search backend received. */
export interface SearchRequest {
  query: string;
  /** False when the backend was busy and refused it. */
  ok: boolean;
}

/** Options of {@link SimulatedSearch}. */
export interface SimulatedSearchOptions {
  /** How many requests, from the first, the backend refuses as busy (default 0). */
  busy?: number;
  /** How long each request takes, like a remote search would (default 50 ms). */
  latencyMs?: number;
}

/**
 * A search backend over {@link LIBRARY}. While busy it refuses a request
 * with an error marked `retryable: true`, which the turn's strategy profile
 * retries with backoff. Like a real client it records every request, so
 * that a test (or the demo) sees how many attempts a search took.
 */
export class SimulatedSearch {
  /** Every request, in the order it arrived. */
  readonly requests: SearchRequest[] = [];
  #busy: number;
  readonly #latencyMs: number;

  constructor({ busy = 0, latencyMs = 50 }: SimulatedSearchOptions = {}) {
    this.#busy = busy;
    this.#latencyMs = latencyMs;
  }

  /** The (at most) `limit` sources that mention most of the query's words, best first. */
  async search(query: string, { limit = 2, signal }: { limit?: number; signal?: AbortSignal } = {}) {
    await delay(this.#latencyMs, undefined, signal ? { signal } : undefined);
    const busy = this.#busy > 0;
    this.requests.push({ query, ok: !busy });
    if (busy) {
      this.#busy -= 1;
      throw Object.assign(new Error('search backend busy'), { retryable: true });
    }
    const words = topicWords(query);
    return LIBRARY.map((source) => ({
      source,
      score: words.filter((word) => mentions(`${source.title} ${source.text}`, word)).length,
    }))
      .filter(({ score }) => score > 0)
      .sort((a, b) => b.score - a.score)
      .slice(0, limit)
      .map(({ source }) => source);
  }
}
