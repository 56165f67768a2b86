import { createRequire } from 'node:module';
import { type Context, type ContextManager, ROOT_CONTEXT } from '@opentelemetry/api';
import { traceContextSlot } from '@switchboard/core/internal';

type ContextAsyncHooksModule = typeof import('@opentelemetry/context-async-hooks');

/**
 * An OpenTelemetry context manager that keeps the active context in the
 * `AsyncLocalStorage` of Switchboard's `RequestContext` (through
 * `traceContextSlot`) instead of one of its own. OpenTelemetry's
 * `AsyncLocalStorageContextManager` with its storage swapped: the same
 * `with`, `bind` (functions and event emitters) and `attach`. On Node 20 and
 * 22 each active `AsyncLocalStorage` adds a hook call to every promise: one
 * storage instead of two made a traced turn about a tenth cheaper here.
 *
 * `disable()` leaves the storage alone (the request context lives there).
 * Undefined when the optional peer `@opentelemetry/context-async-hooks` (the
 * package `@opentelemetry/sdk-trace-node` takes its context manager from)
 * cannot be loaded by `load` (Switchboard's own `require` by default): the
 * caller then registers OpenTelemetry's default.
 */
export function sharedContextManager(
  load: (id: string) => unknown = createRequire(import.meta.url),
): ContextManager | undefined {
  let Base: ContextAsyncHooksModule['AsyncLocalStorageContextManager'];
  try {
    Base = (load('@opentelemetry/context-async-hooks') as ContextAsyncHooksModule)
      .AsyncLocalStorageContextManager;
    if (typeof Base !== 'function') return undefined;
  } catch {
    return undefined;
  }
  class SharedContextManager extends Base {
    override active(): Context {
      return (traceContextSlot.get() as Context | undefined) ?? ROOT_CONTEXT;
    }

    override with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
      context: Context,
      fn: F,
      thisArg?: ThisParameterType<F>,
      ...args: A
    ): ReturnType<F> {
      const callback = thisArg == null ? fn : (fn.bind(thisArg) as F);
      return traceContextSlot.run(context, callback, ...args);
    }

    override attach(context: Context): { dispose(): void } {
      const restore = traceContextSlot.enter(context);
      let disposed = false;
      return {
        dispose() {
          if (disposed) return;
          disposed = true;
          restore();
        },
      };
    }

    override enable(): this {
      return this;
    }

    override disable(): this {
      return this;
    }
  }
  return new SharedContextManager();
}
