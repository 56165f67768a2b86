import {
  context,
  createContextKey,
  ProxyTracerProvider,
  ROOT_CONTEXT,
  type TracerProvider,
  trace,
} from '@opentelemetry/api';
import type { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { sharedContextManager } from './shared-context-manager.js';

/** The provider behind the global OpenTelemetry API, unwrapped from its proxy. */
function globalDelegate(): TracerProvider {
  const provider = trace.getTracerProvider();
  return provider instanceof ProxyTracerProvider ? provider.getDelegate() : provider;
}

/**
 * True when some tracer provider (e.g. a user's `NodeSDK`) is registered with
 * the global OpenTelemetry API. With none, the proxy delegates to the API's
 * no-op provider, the same object a fresh proxy returns.
 */
export function hasGlobalTracerProvider(): boolean {
  return globalDelegate() !== new ProxyTracerProvider().getDelegate();
}

const probeKey = createContextKey('switchboard.context-probe');

/** True when a context manager is registered: without one, `context.with` does not change the active context. */
export function hasContextManager(): boolean {
  return context.with(
    ROOT_CONTEXT.setValue(probeKey, true),
    () => context.active().getValue(probeKey) === true,
  );
}

/**
 * Registers `provider` as the global tracer provider, with a context manager
 * (so the active span follows `await`; {@link sharedContextManager}, which
 * shares the request context's AsyncLocalStorage) unless one is registered
 * already. The caller must have checked
 * {@link hasGlobalTracerProvider}. Returns a function that undoes exactly
 * what was registered.
 */
export function registerGlobally(provider: NodeTracerProvider): () => void {
  const ownsContextManager = !hasContextManager();
  provider.register({
    propagator: null,
    contextManager: ownsContextManager ? (sharedContextManager() ?? undefined) : null,
  });
  let registered = true;
  return () => {
    if (!registered) return;
    registered = false;
    if (globalDelegate() === provider) trace.disable();
    if (ownsContextManager) context.disable();
  };
}
