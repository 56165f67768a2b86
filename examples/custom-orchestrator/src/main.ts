import { App } from '@switchboard/runtime';
import { greeter, reverser } from './agents.js';
import { KeywordRouter } from './keyword-router.js';

const app = new App({ name: 'custom-orchestrator', agents: [greeter, reverser] });
// A class, which the app constructs with its name and agents, or an instance you built yourself.
const server = await app.start(KeywordRouter, { port: Number(process.env.PORT ?? 3000) });
console.log(`custom-orchestrator example listening on ${server.url}`);

// Ctrl-C or a stop signal: refuse new turns, let running ones finish, close the stores, then exit.
const stop = () => server.close().then(() => process.exit(0));
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
