/**
 * What a `MetaRouter` keeps of a turn's choice: a `meta-route` note step and
 * the decision span's attributes, and the choice in session memory, which
 * the turn's later decisions read back (possibly on another replica).
 *
 * @module
 */
import { trace } from '@opentelemetry/api';
import { type Conversation, RequestContext, recordStep, type StepAnnotations } from '@switchboard/core';
import { z } from 'zod';
import type { RouteSetup } from './meta-route-setup.js';
import type { ChosenRoute } from './meta-route-view.js';

/** The choice a later hop of the same turn reads back, possibly on another replica. */
const StoredRouteSchema = z.object({
  v: z.literal(1),
  turnId: z.string(),
  taskType: z.string(),
  pattern: z.string(),
});

/** Records the turn's choice, among `candidates`, as a `meta-route` note step and on the decision span. */
export function recordRoute(
  conversation: Conversation,
  route: ChosenRoute,
  candidates: { taskTypes: string[]; patterns: string[] },
): void {
  const note: StepAnnotations = {
    pattern: route.pattern,
    taskType: route.taskType,
    choice: { taskType: route.taskType, pattern: route.pattern },
    candidates,
    chooser: route.chooser,
  };
  if (route.rationale) note.rationale = route.rationale;
  if (route.confidence !== undefined) note.confidence = route.confidence;
  if (route.fallback) note.fallback = true;
  if (route.problems?.length) note.problems = route.problems;
  recordStep(conversation, 'meta-route', note);
  trace.getActiveSpan()?.setAttributes({
    'switchboard.meta.task_type': route.taskType,
    'switchboard.meta.pattern': route.pattern,
    'switchboard.meta.candidates.task_types': candidates.taskTypes,
    'switchboard.meta.candidates.patterns': candidates.patterns,
    'switchboard.meta.chooser': route.chooser,
    'switchboard.meta.rationale': route.rationale,
    'switchboard.meta.confidence': route.confidence,
    'switchboard.meta.fallback': route.fallback,
    'switchboard.meta.problems': route.problems?.length ? route.problems : undefined,
  });
}

/** The choice made on the turn's first decision, read back from session memory. */
export async function recallRoute(
  memoryKey: string,
  conversation: Conversation,
  setup: RouteSetup,
): Promise<{ taskType: string; pattern: string } | undefined> {
  const memory = RequestContext.tryCurrent()?.getMemory('session');
  const stored = memory ? await memory.getContent(memoryKey) : undefined;
  const parsed = stored?.success ? StoredRouteSchema.safeParse(stored.data) : undefined;
  if (
    parsed?.success &&
    parsed.data.turnId === conversation.turnId &&
    setup.patterns.has(parsed.data.pattern)
  ) {
    return parsed.data;
  }
  // Lost (memory down, expired): choose again rather than fail the turn; the new choice is recorded.
  trace.getActiveSpan()?.setAttribute('switchboard.meta.recalled', false);
  return undefined;
}
