import { pino } from 'pino';
import { afterEach } from 'vitest';
import { buildServerApp, type ServerApp } from '../../src/build-app.js';
import { readConfig } from '../../src/config.js';

/**
 * Registers an `afterEach` that closes every demo server app built through
 * the returned function, which builds one from `env` (as `readConfig` reads
 * it), silent, mounted without a port.
 */
export function useServerApps(): (env: NodeJS.ProcessEnv) => ServerApp {
  let servers: ServerApp[] = [];
  afterEach(async () => {
    await Promise.all(servers.map((server) => server.app.close()));
    servers = [];
  });
  return (env) => {
    const server = buildServerApp(readConfig(env), { logger: pino({ level: 'silent' }) });
    server.app.mount(server.orchestrator);
    servers.push(server);
    return server;
  };
}
