/**
 * `@switchboard/core/internal`: what Switchboard's own packages share and
 * applications do not call. Not public API: it is left out of the docs and
 * may change in any release, without a deprecation. Import from
 * `@switchboard/core` instead.
 *
 * @internal
 * @module
 */
export { agentMetaOf } from './agent-like.js';
export { traceContextSlot } from './context.js';
export { describeError } from './errors/describe-error.js';
export { validateDecision } from './orchestrator.js';
