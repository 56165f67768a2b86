import { buildServerApp } from './build-app.js';
import { readConfig } from './config.js';

let config: ReturnType<typeof readConfig>;
try {
  config = readConfig();
} catch (error) {
  console.error((error as Error).message);
  process.exit(1);
}

const { app, orchestrator, description } = buildServerApp(config);
const server = await app.start(orchestrator, { port: config.PORT, host: config.HOST });
console.log(`Switchboard listening on ${server.url} (${description})`);
console.log(
  `Try: curl -s ${server.url}/v1/chat -H 'content-type: application/json' -d '{"message":"what is 2 + 3 * 4?"}'`,
);

const shutdown = (signal: string) => {
  console.log(`${signal} received: finishing running turns…`);
  server.close().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
};
process.once('SIGINT', () => shutdown('SIGINT'));
process.once('SIGTERM', () => shutdown('SIGTERM'));
