import {
  AbstractOrchestrator,
  type Conversation,
  currentUserMessage,
  latestToolResults,
  type OrchestratorOptions,
  routeToUser,
  toolCall,
} from '@switchboard/core';
import OpenAI from 'openai';
import { llmAgent } from '../../src/agents/llm-agent.js';
import { App, type AppOptions } from '../../src/app.js';
import {
  createScriptedModelServer,
  type ScriptedModelServer,
} from '../../src/testing/scripted-model-server.js';
import type { ScriptEntry } from '../../src/testing/scripted-script.js';

/** The writer's `max_tokens`: every call it makes may cost its input estimate plus this. */
export const MAX_OUTPUT = 300;

/** Asks the writer for a draft, then (with `drafts: 2`) to polish it, then answers with the last reply. */
export function draftsOrchestrator(
  drafts: number,
): new (
  options: OrchestratorOptions,
) => AbstractOrchestrator {
  return class Drafts extends AbstractOrchestrator {
    protected handleMessage(conversation: Conversation) {
      const replies = conversation.messages
        .slice(conversation.turnStart)
        .filter((message) => message.role === 'tool');
      const [last] = latestToolResults(conversation);
      if (replies.length >= drafts && last) return routeToUser(last.content);
      if (last) return toolCall('writer', `polish: ${last.content}`);
      return toolCall('writer', currentUserMessage(conversation).content);
    }
  };
}

/** A scripted model server and an app whose `writer` agent calls it through the `openai` client. */
export async function budgetApp(
  script: ScriptEntry[],
  options: Partial<AppOptions> & { drafts?: number } = {},
): Promise<{ app: App; server: ScriptedModelServer; close(): Promise<void> }> {
  const { drafts = 2, ...appOptions } = options;
  const server = await createScriptedModelServer({ script });
  const writer = llmAgent({
    name: 'writer',
    description: 'Writes drafts',
    model: 'poet-1',
    instructions: 'Write.',
    maxTokens: MAX_OUTPUT,
    client: new OpenAI({ apiKey: 'test', baseURL: server.url, maxRetries: 0 }),
  });
  const app = new App({ name: 'budgets', agents: [writer], logLevel: 'silent', ...appOptions });
  app.mount(draftsOrchestrator(drafts));
  return {
    app,
    server,
    async close() {
      await app.close();
      await server.close();
    },
  };
}

/** A model answer that reports `inputTokens` in and `outputTokens` out. */
export function spending(content: string, inputTokens: number, outputTokens: number): ScriptEntry {
  return { content, usage: { inputTokens, outputTokens } };
}
