// The stream-relay variant's Switchboard: one llmAgent on the scripted model (STREAM_MODEL_URL), chosen by
// keyword routing, in-memory stores, untraced; clients stream its turns from /v1/chat and /v1/chat/completions.
import { timeRelay } from './relay-timing.js';
import { streamApp } from './stream-app.js';
import { countWrites } from './write-counter.js';

const writes = countWrites();
const timing = timeRelay();
const { app, orchestrator } = streamApp('bench-stream', process.env.STREAM_MODEL_URL);
const server = await app.start(orchestrator, { port: 0 });
process.on('message', (message) => {
  if (message === 'cpu') process.send?.({ cpu: process.cpuUsage(), writes: writes(), timing: timing.take() });
});
process.send?.({ ready: server.url });
process.once('disconnect', () => void server.close());
process.once('SIGINT', () => process.exit(0));
