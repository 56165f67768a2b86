// The `honochat` variant: the same app as servers/switchboard.ts (agents, orchestrator, in-memory stores, turn
// event log), mounted without its own server, behind a plain Hono route that calls `app.chat` and answers its
// result as JSON: what a user could write instead of `/v1/chat`. `memory ÷ honochat` is what the app's own
// route (request log, body checks, validation, routing of every other endpoint) costs on top of the turn.
import { serve } from '@hono/node-server';
import { App } from '@switchboard/runtime';
import { benchAgents, benchOrchestrator } from './orchestrator.js';
import { plainChatRoute } from './plain-chat-route.js';
import { reportWhenListening } from './report.js';

const app = new App({ name: 'bench', agents: benchAgents(), logger: () => {} });
app.mount(benchOrchestrator(app));
const server = serve({ fetch: plainChatRoute(app).fetch, port: 0, hostname: '127.0.0.1' }, (info) =>
  reportWhenListening(`http://127.0.0.1:${info.port}`),
);
process.once('disconnect', () => server.close());
process.once('SIGINT', () => process.exit(0));
