// The plain Hono route a user could write instead of `/v1/chat`: it calls `app.chat` and answers its result as
// JSON. Shared by the `honochat` server (servers/hono-chat.ts) and bench/route-overhead.ts, so that both
// measure the app's own route against the same thing.
import type { App } from '@switchboard/runtime';
import { Hono } from 'hono';

/** A Hono app with one route, `POST /v1/chat`, that calls `app.chat` and answers its result as JSON. */
export function plainChatRoute(app: App): Hono {
  const hono = new Hono();
  hono.post('/v1/chat', async (c) => {
    const body = await c.req.json<{ message: string; sessionId?: string }>();
    return c.json(await app.chat({ sessionId: body.sessionId, message: body.message }));
  });
  return hono;
}
