/**
 * Names the main export keeps for one minor version after they moved or were
 * renamed (see CHANGELOG.md). Each says where its home is now; this file is
 * emptied in the next minor.
 * @module
 */
import type { TokenUsage as CoreTokenUsage } from '@switchboard/core';
import { OBSERVE_TRACER_NAME as OTEL_OBSERVE_TRACER_NAME } from './tracing/observe.js';
import { TRACER_NAME as OTEL_TRACER_NAME } from './tracing/spans.js';

/**
 * @deprecated Import `TokenUsage` from `@switchboard/core`; `@switchboard/runtime` stops exporting it in the
 * next minor.
 */
export type TokenUsage = CoreTokenUsage;

/**
 * @deprecated Import `TRACER_NAME` from `@switchboard/runtime/otel`; the main export drops it in the next
 * minor.
 */
export const TRACER_NAME: typeof OTEL_TRACER_NAME = OTEL_TRACER_NAME;

/**
 * @deprecated Import `OBSERVE_TRACER_NAME` from `@switchboard/runtime/otel`; the main export drops it in the
 * next minor.
 */
export const OBSERVE_TRACER_NAME: typeof OTEL_OBSERVE_TRACER_NAME = OTEL_OBSERVE_TRACER_NAME;
