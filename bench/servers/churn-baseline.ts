// The hand-written turn of bench/baseline-turn.ts behind a Hono POST /v1/chat: the churn bench's fair
// baseline over HTTP (the same routing, agents and storage as Switchboard, no framework).
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { createBaselineTurn } from '../baseline-turn.js';
import { reportWhenListening } from './report.js';

const turn = createBaselineTurn();
let sessions = 0;
const app = new Hono();
app.post('/v1/chat', async (c) => {
  const body = await c.req.json<{ message?: unknown; sessionId?: unknown }>();
  if (typeof body.message !== 'string' || body.message.length === 0 || body.message.length > 10_000)
    return c.json({ error: 'message must be a non-empty string' }, 400);
  const sessionId =
    typeof body.sessionId === 'string' && body.sessionId.length <= 200 ? body.sessionId : `s${sessions++}`;
  const reply = await turn(sessionId, body.message);
  return c.json({ sessionId, reply, status: 'completed' });
});
const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) =>
  reportWhenListening(`http://127.0.0.1:${info.port}`),
);
process.once('disconnect', () => server.close());
