import { KeywordOrchestrator } from '@switchboard/orchestrators';
import { App, llmAgent } from '@switchboard/runtime';
import { createScriptedModelServer } from '@switchboard/runtime/testing';

const model = await createScriptedModelServer({ fallback: () => 'hello there friend' } as never);
const writer = llmAgent({
  name: 'writer',
  description: 'Writes',
  keywords: ['write'],
  model: 'm',
  instructions: 'x',
  apiKey: 'k',
  baseURL: model.url,
});
const app = new App({ name: 'b', agents: [writer], logger: () => {} });
app.mount(new KeywordOrchestrator({ name: 'b', agents: app.agentMetas, fallbackAgent: 'writer' }));
for (let i = 0; i < 500; i++) await app.chat({ message: 'write something' });
const t0 = process.cpuUsage();
for (let i = 0; i < 3000; i++) await app.chat({ message: 'write something', sessionId: `s${(i / 3) | 0}` });
const u = process.cpuUsage(t0);
console.log('cpu µs/turn (this process, model server included)', ((u.user + u.system) / 3000).toFixed(0));
await app.close();
await model.close();
