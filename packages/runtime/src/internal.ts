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
export { matchesAgent } from './config/config-checks.js';
