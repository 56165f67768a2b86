import { type AgentMeta, ROUTE_TO_USER } from '@switchboard/core';
import type { ScriptEntry } from '@switchboard/runtime/testing';
import { createScriptedModelServer, type ScriptedModelServer } from '@switchboard/runtime/testing';
import OpenAI from 'openai';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { llmTaskClassifier, NO_TASK } from '../src/llm-task-classifier.js';
import { TaskOrchestrator, type TaskOrchestratorOptions } from '../src/task-orchestrator.js';
import { RecordingTracer } from './llm-recording-tracer.js';
import { TestSession } from './support/turn-driver.js';

const agents: AgentMeta[] = [
  { name: 'calculator', description: 'Evaluates arithmetic expressions' },
  { name: 'clock', description: 'Tells the current time and date' },
  { name: 'help', description: 'Explains what this assistant can do' },
];
const tasks: TaskOrchestratorOptions['tasks'] = {
  arithmetic: { agent: 'calculator', description: 'Compute a numeric result' },
  'time-query': { agent: 'clock' },
};

const tracer = new RecordingTracer();
beforeAll(() => tracer.register());
afterAll(() => tracer.unregister());

let server: ScriptedModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function taskRouter(script: ScriptEntry[], options: Partial<TaskOrchestratorOptions> = {}) {
  server = await createScriptedModelServer({ script });
  const client = new OpenAI({ apiKey: 'test', baseURL: server.url, maxRetries: 0 });
  const identifyTask = llmTaskClassifier({ model: 'classifier-model', client });
  return { server, orchestrator: new TaskOrchestrator({ agents, tasks, identifyTask, ...options }) };
}

const pick = (task: string) => JSON.stringify({ thought: 'obvious', task });

describe('llmTaskClassifier', () => {
  it("routes to the agent of the model's task, offering the task names through a strict schema", async () => {
    const { server, orchestrator } = await taskRouter([pick('time-query')]);
    tracer.spans.length = 0;
    const outcome = await new TestSession({ orchestrator, agents: { clock: () => '09:30' } }).send(
      'what time is it?',
    );

    expect(outcome.agentCalls[0]).toMatchObject({ toolName: 'clock', input: { task: 'time-query' } });
    expect(outcome.reply).toBe('09:30');
    const body = server.requests[0]?.body;
    expect(body?.messages.at(-1)).toEqual({ role: 'user', content: 'what time is it?' });
    expect(String(body?.messages[0]?.content)).toContain('- arithmetic: Compute a numeric result');
    expect(String(body?.messages[0]?.content)).toContain('- time-query: Tells the current time and date');
    const format = body?.response_format;
    const schema = format?.type === 'json_schema' ? format.json_schema.schema : undefined;
    expect((schema?.properties as { task?: { enum: string[] } } | undefined)?.task?.enum).toEqual([
      'arithmetic',
      'time-query',
      NO_TASK,
    ]);
    // The runtime decides inside its own decision span, which the classifier annotates.
    const decisionSpans = tracer.spans.filter((recorded) => recorded.name === 'route 0');
    expect(decisionSpans).toHaveLength(1);
    expect(decisionSpans[0]?.attributes).toMatchObject({ 'switchboard.task.choice': 'time-query' });
    server.assertDone();
  });

  it('answers "no task" with the fallback agent, and offers only the tasks of candidate agents', async () => {
    const { server, orchestrator } = await taskRouter([pick(NO_TASK)], { fallbackAgent: 'help' });
    const outcome = await new TestSession({ orchestrator }).send('tell me a joke', {
      candidates: ['clock', 'help'],
    });

    expect(outcome.agentCalls[0]?.toolName).toBe('help');
    const format = server.requests[0]?.body.response_format;
    const schema = format?.type === 'json_schema' ? format.json_schema.schema : undefined;
    expect((schema?.properties as { task?: { enum: string[] } } | undefined)?.task?.enum).toEqual([
      'time-query',
      NO_TASK,
    ]);
  });

  it('retries an invalid answer with feedback, then treats a second failure as no task', async () => {
    const { server, orchestrator } = await taskRouter(['arithmetic!', pick('stocks')]);
    const outcome = await new TestSession({ orchestrator }).send('AAPL?');

    expect(outcome.agentCalls).toEqual([]);
    expect(outcome.decisions[0]).toMatchObject({ toolName: ROUTE_TO_USER });
    expect(server.requests[1]?.body.messages.slice(-2)).toEqual([
      { role: 'assistant', content: 'arithmetic!' },
      { role: 'user', content: expect.stringContaining('it was not valid JSON') },
    ]);
    server.assertDone();
  });
});
