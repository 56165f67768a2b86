/**
 * `@switchboard/runtime/internal`: what Switchboard's own packages (the
 * built-in orchestrators) share with the runtime and applications do not
 * call. Not public API: it is left out of the docs and may change in any
 * release, without a deprecation. Import from `@switchboard/runtime` (or one
 * of its documented subpaths) instead.
 *
 * @internal
 * @module
 */
export { clientResolver } from './agents/llm-client.js';
// Also public from `@switchboard/runtime/otel`, whose other exports need the optional `@langfuse/otel`: the
// built-in orchestrators record their model calls without requiring it.
export { endGeneration, startGeneration } from './agents/llm-tracing.js';
export { matchesAgent } from './config/config-checks.js';
