/** A JSON value: what annotations may hold, so that they survive being stored and traced. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/**
 * What patterns and rails record on a routing step, beside the calls
 * themselves. The keys below are the ones Switchboard's own patterns and
 * rails use; any other key holding a JSON value is yours. Extend the
 * interface (declaration merging) to type keys of your own.
 *
 * @example
 * ```ts
 * declare module '@switchboard/core' {
 *   interface StepAnnotations { ticketId?: string }
 * }
 * ```
 */
export interface StepAnnotations {
  /** Shared by the calls of one fan-out and by everything that follows from it. */
  correlationId?: string;
  /** How many branches a fan-out expects back. */
  expectedBranches?: number;
  /** The step of a step-rule wrapper that was active for this decision. */
  activeStep?: string;
  /** The pattern a meta-router chose. */
  pattern?: string;
  [key: string]: JsonValue | undefined;
}

/** Token counts of one model call, or summed over several. */
export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
}

/**
 * Lets an orchestrator record, during one decision, what the decision itself
 * cannot say: annotations on the step the decision produces, or a step of its
 * own that is not a call (a chosen pattern, a plan). The runtime provides it
 * on `conversation.recorder`; use {@link annotateStep} and {@link recordStep},
 * which do nothing on a hand-built conversation.
 */
export interface StepRecorder {
  /** Merges `annotations` into the step this decision produces. */
  annotate(annotations: StepAnnotations): void;
  /** Records a step of kind `note` (before the decision's own step) with a short label. */
  note(label: string, annotations?: StepAnnotations): void;
  /** Adds the tokens of a model call made for this decision to its step's (and the turn's) usage. */
  usage(usage: TokenUsage): void;
}

/**
 * Adds annotations to the routing step of the decision being made.
 * @example
 * ```ts
 * annotateStep(conversation, { activeStep: 'collect-details' });
 * ```
 */
export function annotateStep(
  conversation: { readonly recorder?: StepRecorder },
  annotations: StepAnnotations,
): void {
  conversation.recorder?.annotate(annotations);
}

/**
 * Records a decision that is not a call (a plan, a chosen pattern) as a
 * routing step of kind `note`, stored with the turn and shown in its steps.
 * @example
 * ```ts
 * recordStep(conversation, 'plan', { steps: ['research', 'write'] });
 * ```
 */
export function recordStep(
  conversation: { readonly recorder?: StepRecorder },
  label: string,
  annotations?: StepAnnotations,
): void {
  conversation.recorder?.note(label, annotations);
}

/**
 * Counts the tokens of a model call the orchestrator made for this decision
 * (an LLM router's call): they are added to the step's and the turn's
 * `usage`, next to the tokens of the agents' model calls.
 * @example
 * ```ts
 * recordUsage(conversation, { inputTokens: 120, outputTokens: 14 });
 * ```
 */
export function recordUsage(conversation: { readonly recorder?: StepRecorder }, usage: TokenUsage): void {
  conversation.recorder?.usage(usage);
}
