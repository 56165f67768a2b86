// Switchboard's POST /v1/chat on the churn workload: keyword routing to one of three agents that await,
// in-memory store, untraced. The load generator opens a new session every 3 requests.
import { App } from '@switchboard/runtime';
import { churnAgents } from '../churn-workload.js';
import { benchOrchestrator } from './orchestrator.js';
import { reportWhenListening } from './report.js';

const app = new App({ name: 'bench-churn', agents: churnAgents(), logger: () => {} });
const server = await app.start(benchOrchestrator(app), { port: 0 });
reportWhenListening(server.url);
process.once('disconnect', () => void server.close());
process.once('SIGINT', () => process.exit(0));
