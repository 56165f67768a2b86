import { App } from '@switchboard/runtime';
import { greeter, reverser } from './agents.js';
import { KeywordRouter } from './keyword-router.js';

const app = new App({ name: 'custom-orchestrator', agents: [greeter, reverser] });
const server = await app.start(KeywordRouter, { port: Number(process.env.PORT ?? 3000) });
console.log(`custom-orchestrator example listening on ${server.url}`);
process.once('SIGINT', () => void server.close());
process.once('SIGTERM', () => void server.close());
