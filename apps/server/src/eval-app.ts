/**
 * The demo server as an app module for `switchboard eval` and `switchboard
 * replay`: its agents and the orchestrator its environment selects
 * (`ORCHESTRATOR`, default keyword), as `main.ts` builds them.
 *
 * @example
 * ```sh
 * pnpm --filter @switchboard/server eval
 * ORCHESTRATOR=task pnpm --filter @switchboard/server eval
 * ```
 *
 * @module
 */
import { buildServerApp } from './build-app.js';
import { readConfig } from './config.js';

const { app, orchestrator } = buildServerApp(readConfig(process.env));

/** The app's name. */
export const name = app.name;
/** The demo agents (and the assistant, with an OpenAI key). */
export const agents = app.agents;
export { orchestrator };
