// The stream-relay variant's model: the project's scripted OpenAI-compatible server answering every call with
// STREAM_DELTAS deltas (default 200) after a first-token delay of STREAM_FIRST_DELAY_MS (default 50 ms). It runs in
// a process of its own so that its CPU is not counted against the relay measured.
import { createScriptedModelServer } from '@switchboard/runtime/testing';
import { countWrites } from './write-counter.js';

const writes = countWrites();
const deltas = Number(process.env.STREAM_DELTAS ?? 200);
const delayMs = Number(process.env.STREAM_FIRST_DELAY_MS ?? 50);
const chunks = Array.from({ length: deltas }, (_, index) => `word${index} `);
const server = await createScriptedModelServer({
  fallback: { chunks, content: chunks.join(''), delayMs, usage: { inputTokens: 20, outputTokens: deltas } },
});
process.on('message', (message) => {
  if (message === 'cpu') process.send?.({ cpu: process.cpuUsage(), writes: writes() });
});
process.send?.({ ready: server.url });
process.once('disconnect', () => void server.close());
