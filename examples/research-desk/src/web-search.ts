import { defineAgent } from '@switchboard/runtime';

/** Options of {@link SimulatedWebSearch}. */
export interface WebSearchOptions {
  /** True while the search service is down: every call fails. Default true, so the demo shows the breaker. */
  down?: boolean;
}

/**
 * A stand-in for a web search API that is down (a flaky dependency): every
 * call fails while `down` is set. `calls` counts the calls that reached it,
 * so a test can tell a banned agent was not run.
 */
export class SimulatedWebSearch {
  down: boolean;
  calls = 0;

  constructor({ down = true }: WebSearchOptions = {}) {
    this.down = down;
  }

  /** The `web-search` agent over this service. */
  agent() {
    return defineAgent({
      name: 'web-search',
      description: 'Searches the web for recent articles',
      run: (query) => {
        this.calls += 1;
        if (this.down) throw new Error('web search API answered 503 Service Unavailable');
        return `Web results for "${query}".\n\nSources:\n[1] web/grid-storage-news (score 0.60): Grid storage capacity grew fast in recent years, led by batteries.`;
      },
    });
  }
}
