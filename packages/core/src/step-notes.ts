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
  /**
   * Sends part of the answer this decision is writing to the clients that
   * stream the turn; `reset` drops what was sent before (see
   * {@link streamAnswer}). Absent on recorders that stream nothing.
   */
  stream?(delta: string, reset?: boolean): void;
  /** Switches the turn to another strategy profile from its next decision on (see `useProfile`). */
  profile?(name: string): void;
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

/**
 * Streams part of the answer this decision is writing, as the model writes
 * it, to the clients that stream the turn (an `answer-delta` event over SSE,
 * `delta.content` on the OpenAI-compatible stream). The decision still
 * returns the whole answer with `routeToUser`: that is what is stored and
 * what the final `message` event carries, and it wins over what was
 * streamed. Does nothing when nobody streams the turn or on a hand-built
 * conversation.
 * @example
 * ```ts
 * for await (const chunk of completion) streamAnswer(conversation, chunk.choices[0]?.delta.content ?? '');
 * ```
 */
export function streamAnswer(conversation: { readonly recorder?: StepRecorder }, delta: string): void {
  if (delta !== '') conversation.recorder?.stream?.(delta);
}

/**
 * Drops what {@link streamAnswer} sent for this decision (the model's answer
 * turned out invalid and is asked again, or the decision became a call):
 * clients receive an `answer-delta` with `reset: true`.
 * @example
 * ```ts
 * if (!checked.ok) discardStreamedAnswer(conversation);
 * ```
 */
export function discardStreamedAnswer(conversation: { readonly recorder?: StepRecorder }): void {
  conversation.recorder?.stream?.('', true);
}
