/**
 * Starts the stateful-orchestrator example: `pnpm --filter @switchboard/example-stateful-orchestrator start`.
 * `PORT` (default 3000) and `HOST` (default 127.0.0.1) come from the environment.
 *
 * @module
 */
import { buildApp } from './app.js';

const { app, orchestrator } = buildApp();
const server = await app.start(orchestrator, {
  port: Number(process.env.PORT ?? 3000),
  host: process.env.HOST ?? '127.0.0.1',
});
console.log(`stateful-orchestrator example listening on ${server.url}`);
console.log(
  `Try: curl -s ${server.url}/v1/chat -H 'content-type: application/json' -d '{"message":"my name is Ada","sessionId":"demo","userId":"ada"}'`,
);
process.once('SIGINT', () => void server.close());
process.once('SIGTERM', () => void server.close());
