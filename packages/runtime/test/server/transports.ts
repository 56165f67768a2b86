import type { App } from '../../src/app.js';
import {
  buildApp,
  createApp,
  type ScriptedOrchestrator,
  type TestAppOptions,
} from '../support/app-fixtures.js';

/** A running app reached through one transport. */
export interface Served {
  app: App;
  orchestrator: ScriptedOrchestrator;
  send(path: string, init?: RequestInit): Promise<Response>;
  close(): Promise<void>;
}

/** A way of reaching the HTTP API: in-process (`app.request`) or over a real port. */
export interface Transport {
  name: string;
  serve(options: TestAppOptions): Promise<Served>;
}

/** `app.request()` without a port. */
export const inProcess: Transport = {
  name: 'app.request',
  serve: async (options) => {
    const { app, orchestrator } = createApp(options);
    return {
      app,
      orchestrator,
      send: async (path, init) => app.request(path, init),
      close: () => app.close(),
    };
  },
};

/** `app.start(orchestrator, { port: 0 })` and `fetch` to its URL. */
export const overPort: Transport = {
  name: 'real port',
  serve: async (options) => {
    const { app, orchestrator } = buildApp(options);
    const handle = await app.start(orchestrator, { port: 0 });
    return {
      app,
      orchestrator,
      send: (path, init) => fetch(`${handle.url}${path}`, init),
      close: () => handle.close(),
    };
  },
};

/** Both transports, for `describe.each`. */
export const transports: readonly Transport[] = [inProcess, overPort];
