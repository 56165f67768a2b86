// The stream-relay variant's baseline: the least a Hono route can do to relay a model's stream as SSE: call the
// model with the real `openai` client and write each delta as an SSE event (STREAM_MODEL_URL: the model's base URL).
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { streamSSE } from 'hono/streaming';
import OpenAI from 'openai';
import { timeRelay } from './relay-timing.js';
import { countWrites } from './write-counter.js';

const writes = countWrites();
const timing = timeRelay();
const client = new OpenAI({ apiKey: 'sk-bench', baseURL: process.env.STREAM_MODEL_URL, maxRetries: 0 });
const app = new Hono();
app.post('/v1/chat', async (c) => {
  const body = await c.req.json<{ message: string }>();
  const stream = await client.chat.completions.create({
    model: 'bench-model',
    messages: [
      { role: 'system', content: 'You are a bench.' },
      { role: 'user', content: body.message },
    ],
    stream: true,
  });
  return streamSSE(c, async (sse) => {
    for await (const chunk of stream) {
      const delta = chunk.choices[0]?.delta.content;
      if (delta) await sse.writeSSE({ event: 'delta', data: JSON.stringify({ delta }) });
    }
    await sse.writeSSE({ event: 'end', data: '{}' });
  });
});
const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) => {
  process.on('message', (message) => {
    if (message === 'cpu')
      process.send?.({ cpu: process.cpuUsage(), writes: writes(), timing: timing.take() });
  });
  process.send?.({ ready: `http://127.0.0.1:${info.port}` });
});
process.once('disconnect', () => server.close());
process.once('SIGINT', () => process.exit(0));
