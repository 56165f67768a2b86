// Baseline: the cheapest useful JSON endpoint Hono can serve (parse the body, answer JSON).
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { reportWhenListening } from './report.js';

const app = new Hono();
app.post('/v1/chat', async (c) => {
  const body = await c.req.json<{ message: string; sessionId?: string }>();
  return c.json({ sessionId: body.sessionId ?? 'none', reply: `echo: ${body.message}`, status: 'completed' });
});
const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) =>
  reportWhenListening(`http://127.0.0.1:${info.port}`),
);
process.once('disconnect', () => server.close());
