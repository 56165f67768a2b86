import { KeywordOrchestrator } from '@switchboard/orchestrators';
import type { App } from '@switchboard/runtime';

/** The orchestrator every Switchboard bench variant uses: keyword routing. */
export function benchOrchestrator(app: App): KeywordOrchestrator {
  return new KeywordOrchestrator({ name: 'bench', agents: app.agentMetas });
}
