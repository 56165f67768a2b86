import type { ServerHandle } from '@switchboard/runtime';
import {
  createScriptedModelServer,
  type ScriptEntry,
  type ScriptedModelServer,
} from '@switchboard/runtime/testing';
import { buildApp } from '../src/app.js';

/** The model name the tests configure; the scripted server echoes it back. */
export const MODEL = 'test-model';

/** A router answer as the model would write it: the strict JSON of the routing schema. */
export function routeTo(agent: string, message: string, reason = `chose ${agent}`): string {
  return JSON.stringify({ thought: `the user needs ${agent}`, agent, message, reason });
}

/** The example app, wired to a scripted model server through the real `openai` client, listening on a free port. */
export async function startWithScript(script: ScriptEntry[]): Promise<{
  model: ScriptedModelServer;
  server: ServerHandle;
  close(): Promise<void>;
}> {
  const model = await createScriptedModelServer({ script });
  const { app, orchestrator } = buildApp({
    apiKey: 'test-key',
    baseURL: model.url,
    model: MODEL,
    maxRetries: 0,
    logLevel: 'silent',
  });
  const server = await app.start(orchestrator, { port: 0 });
  return {
    model,
    server,
    close: async () => {
      await server.close();
      await model.close();
    },
  };
}

/** One Server-Sent Event, its `data` parsed. */
export interface StreamEvent {
  event: string;
  data: Record<string, unknown>;
}

/** Splits an SSE body into events. */
export function parseEvents(body: string): StreamEvent[] {
  return body
    .split(/\r?\n\r?\n/)
    .filter((block) => block.trim() !== '')
    .map((block) => {
      const fields = new Map<string, string>();
      for (const line of block.split(/\r?\n/)) {
        const colon = line.indexOf(':');
        if (colon > 0) fields.set(line.slice(0, colon), line.slice(colon + 1).trimStart());
      }
      return {
        event: fields.get('event') ?? 'message',
        data: JSON.parse(fields.get('data') ?? '{}') as Record<string, unknown>,
      };
    });
}
