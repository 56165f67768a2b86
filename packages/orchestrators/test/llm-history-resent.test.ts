import { ROUTE_TO_USER } from '@switchboard/core';
import { App, defineAgent } from '@switchboard/runtime';
import { createScriptedModelServer } from '@switchboard/runtime/testing';
import OpenAI from 'openai';
import { afterAll, describe, expect, it } from 'vitest';
import { LlmOrchestrator } from '../src/llm-orchestrator.js';

const decide = (agent: string, message: string) =>
  JSON.stringify({ thought: `about ${agent}`, agent, message, reason: `because ${agent}` });

describe('an LLM orchestrator behind a client that resends the whole history', () => {
  const servers: Array<{ close(): Promise<void> }> = [];
  afterAll(async () => {
    for (const server of servers.reverse()) await server.close();
  });

  it('sees every earlier turn on the third request, with no session id sent', async () => {
    const model = await createScriptedModelServer({
      script: [
        decide('clock', 'time in Oslo'),
        decide(ROUTE_TO_USER, 'It is 14:05 in Oslo.'),
        decide('clock', 'time in Lima'),
        decide(ROUTE_TO_USER, 'It is 08:05 in Lima.'),
        decide(ROUTE_TO_USER, 'Oslo is six hours ahead of Lima.'),
      ],
    });
    servers.push(model);
    const clock = defineAgent({
      name: 'clock',
      description: 'Tells the time',
      run: (task) => `clock: ${task}`,
    });
    const orchestrator = new LlmOrchestrator({
      agents: [{ name: clock.name, description: clock.description }],
      model: 'router-model',
      client: new OpenAI({ apiKey: 'test', baseURL: model.url, maxRetries: 0 }),
    });
    const server = await new App({ name: 'desk', agents: [clock], logger: () => {} }).start(orchestrator, {
      port: 0,
    });
    servers.push(server);
    const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'unused', maxRetries: 0 });

    const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [];
    for (const question of ['What time is it in Oslo?', 'And in Lima?', 'How far apart are they?']) {
      messages.push({ role: 'user', content: question });
      const completion = await client.chat.completions.create({ model: orchestrator.name, messages });
      messages.push({ role: 'assistant', content: completion.choices[0]!.message.content });
    }
    expect(messages.at(-1)).toEqual({ role: 'assistant', content: 'Oslo is six hours ahead of Lima.' });
    // The router's prompt on the third request holds both earlier questions and answers.
    const prompt = JSON.stringify(model.requests.at(-1)!.body.messages);
    for (const earlier of [
      'What time is it in Oslo?',
      'It is 14:05 in Oslo.',
      'And in Lima?',
      'It is 08:05 in Lima.',
    ])
      expect(prompt).toContain(earlier);
    model.assertDone();
  });
});
