import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ConfigurationError, type Orchestrator } from '@switchboard/core';
import { type Agent, App, type AppOptions, type OrchestratorInput } from '@switchboard/runtime';
import type { EvalTarget } from '@switchboard/runtime/eval';

/**
 * What an app module exports, as its default export or as named exports:
 * `agents` and `orchestrator` (an instance or a class), with an optional
 * `name` and `appOptions`; or `app`, an `App` with its orchestrator mounted.
 *
 * @example
 * ```ts
 * // src/app.ts
 * export const agents = [clock, calculator];
 * export const orchestrator = MyRouter;
 * ```
 */
export interface AppModule {
  name?: string;
  agents?: readonly Agent[];
  orchestrator?: OrchestratorInput;
  appOptions?: Partial<Omit<AppOptions, 'agents'>>;
  app?: App;
}

/** An app module as loaded: what to evaluate, and how to serve it. */
export interface LoadedApp {
  /** The module's file, absolute. */
  path: string;
  name: string;
  target: EvalTarget;
  /** A new app for the module (a mounted `app` export is returned as it is). */
  create(extra?: Partial<AppOptions>): { app: App; orchestrator?: OrchestratorInput };
}

// Duck-typed: a second copy of the runtime package would fail `instanceof`.
function isApp(value: unknown): value is App {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as App).mount === 'function' &&
    typeof (value as App).chat === 'function'
  );
}

function isOrchestratorInput(value: unknown): value is OrchestratorInput {
  return (
    typeof value === 'function' ||
    (typeof value === 'object' && value !== null && typeof (value as Orchestrator).decide === 'function')
  );
}

/**
 * Imports an app module (TypeScript works: the `switchboard` command runs
 * with tsx's loader) and checks its exports.
 *
 * @throws ConfigurationError naming what the module lacks.
 */
export async function loadAppModule(specifier: string, cwd = process.cwd()): Promise<LoadedApp> {
  const path = resolve(cwd, specifier);
  if (!existsSync(path)) throw new ConfigurationError({ message: `No app module at ${specifier}` });
  const loaded = (await import(pathToFileURL(path).href)) as AppModule & { default?: AppModule | App };
  const exported: AppModule = isApp(loaded.default)
    ? { app: loaded.default }
    : typeof loaded.default === 'object' && loaded.default !== null
      ? { ...loaded, ...loaded.default }
      : loaded;
  const { app, agents, orchestrator, appOptions = {} } = exported;
  if (isApp(app)) {
    if (!app.orchestrator)
      throw new ConfigurationError({
        message: `${specifier}: its app has no orchestrator; call app.mount(…)`,
      });
    return { path, name: app.name, target: app, create: () => ({ app }) };
  }
  if (!Array.isArray(agents) || !isOrchestratorInput(orchestrator))
    throw new ConfigurationError({
      message: `${specifier} must export 'agents' (an array) and 'orchestrator' (a class or an instance), or 'app' (a mounted App)`,
    });
  const name = exported.name ?? appOptions.name ?? 'app';
  return {
    path,
    name,
    target: { orchestrator, agents, name },
    create: (extra = {}) => ({ app: new App({ ...appOptions, ...extra, name, agents }), orchestrator }),
  };
}
