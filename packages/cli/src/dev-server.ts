/**
 * The process `switchboard dev` runs (and restarts on changes): loads an
 * app module and serves it with the console. Arguments: the module, the
 * port, the host.
 *
 * @module
 */
import { serve } from '@hono/node-server';
import type { OrchestratorInput, ServerHandle } from '@switchboard/runtime';
import { loadAppModule } from './app-module.js';

const [specifier, port = '3000', host = '127.0.0.1'] = process.argv.slice(2);
if (!specifier) throw new Error('usage: dev-server <app-module> [port] [host]');
const loaded = await loadAppModule(specifier);
let { app, orchestrator } = loaded.create({ console: true });
let close: () => Promise<void>;
let url: string;
if (orchestrator !== undefined) {
  let server: ServerHandle;
  try {
    server = await app.start(orchestrator, { port: Number(port), host });
  } catch (error) {
    // Without the console package (or its build) the app is still worth serving.
    if (!String((error as Error).message).includes('console')) throw error;
    process.stderr.write(`Serving without the console: ${(error as Error).message}\n`);
    ({ app, orchestrator } = loaded.create({ console: false }));
    server = await app.start(orchestrator as OrchestratorInput, { port: Number(port), host });
  }
  ({ url } = server);
  close = () => server.close();
} else {
  // A mounted app from the module: served as it is (its own console setting).
  const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
    const listening = serve({ fetch: app.fetch, port: Number(port), hostname: host }, () =>
      resolve(listening),
    );
  });
  const address = server.address();
  url = `http://${host}:${typeof address === 'object' && address ? address.port : port}`;
  close = async () => {
    await new Promise((resolve) => server.close(resolve));
    await app.close();
  };
}
process.stdout.write(`${loaded.name} listening on ${url} (console at ${url}/)\n`);
const stop = () => void close().then(() => process.exit(0));
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
