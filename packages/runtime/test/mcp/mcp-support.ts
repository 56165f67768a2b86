import { fileURLToPath } from 'node:url';
import {
  AbstractOrchestrator,
  type Conversation,
  currentUserMessage,
  latestToolResults,
  routeToUser,
  toolCall,
} from '@switchboard/core';
import OpenAI from 'openai';
import type { ScriptedModelServer } from '../../src/testing/scripted-model-server.js';

/** How to start the test tool server over stdio. */
export const STDIO_TOOL_SERVER = {
  command: process.execPath,
  args: ['--import', 'tsx', fileURLToPath(new URL('./fixtures/tool-server.ts', import.meta.url))],
  name: 'test-tools',
};

/** Sends every message to the `assistant` agent, then hands its answer to the user. */
export class ToAssistant extends AbstractOrchestrator {
  protected handleMessage(conversation: Conversation) {
    const [reply] = latestToolResults(conversation);
    if (reply) return routeToUser(reply.content);
    return toolCall('assistant', currentUserMessage(conversation).content);
  }
}

/** An OpenAI client of the scripted model server. */
export function modelClient(server: ScriptedModelServer): OpenAI {
  return new OpenAI({ apiKey: 'test', baseURL: server.url, maxRetries: 0 });
}

/** What the model was sent as the result of each tool call, in order, across requests. */
export function toolResultsSeen(server: ScriptedModelServer): string[] {
  const seen = new Set<string>();
  const results: string[] = [];
  for (const request of server.requests) {
    for (const message of request.body.messages) {
      if (message.role !== 'tool' || seen.has(message.tool_call_id)) continue;
      seen.add(message.tool_call_id);
      results.push(String(message.content));
    }
  }
  return results;
}
