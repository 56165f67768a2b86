import {
  AbstractOrchestrator,
  type AgentMeta,
  annotateStep,
  ConfigurationError,
  type ConfigView,
  type Conversation,
  createId,
  type Decision,
  type ErrorMessage,
  isErrorMessage,
  latestToolResults,
  type Memory,
  type Orchestrator,
  RequestContext,
  type StepAnnotations,
  StoreUnavailableError,
  type ToolMessage,
  UnknownAgentError,
} from '@switchboard/core';
import type { StepRulesItem } from '@switchboard/runtime';
import { refusalText, StepRefusedError } from './step-refused-error.js';
import { type CompiledStep, compileSteps, type StepRule } from './step-rules-config.js';
import {
  allowedAgents,
  applyReplies,
  chooseStep,
  FRESH_STATE,
  nextInSequence,
  parseStepState,
  type StoredStepState,
} from './step-rules-state.js';

/**
 * Options of {@link withSteps}. An AgentDock orchestration configuration
 * (`{ description, steps }`, its steps with `availableTools` and its
 * conditions with `type: 'tool_used'` and `value`) is accepted as it is.
 */
export interface StepRulesOptions {
  steps: readonly StepRule[];
  /** Default: the wrapped orchestrator's name. The session-memory key is `steps:<name>`. */
  name?: string;
  /** Default: the wrapped orchestrator's. AgentDock's list of lines is joined with spaces. */
  description?: string | readonly string[];
  /** How many of the session's latest successful calls `used` and `sequence_match` look at. Default 10. */
  recentWindow?: number;
}

/** A call the active step does not allow, and the id its refusal answers. */
interface RefusedCall {
  agent: string;
  callId: string;
}

/**
 * The orchestrator {@link withSteps} returns: it narrows the candidate
 * agents of each decision to what the session's active step allows, then
 * lets the wrapped orchestrator decide.
 */
export class StepRulesOrchestrator extends AbstractOrchestrator {
  /** The orchestrator that decides within the step's agents. */
  readonly inner: Orchestrator;
  /** The names of the steps, in the order their conditions are tried. */
  readonly stepNames: readonly string[];
  /** Where a session's step state lives in its session memory. */
  readonly memoryKey: string;
  /** How many of the session's latest successful calls the conditions look at. */
  readonly recentWindow: number;
  readonly #steps: readonly CompiledStep[];
  /** The steps of each live configuration with this wrapper's `step-rules` item, compiled once per configuration. */
  readonly #configured = new WeakMap<ConfigView, readonly CompiledStep[]>();

  /**
   * @deprecated Build it with {@link withSteps}, the one way to wrap an orchestrator: the class stays
   * exported as the type `withSteps` returns; its constructor leaves the public API in the next minor.
   */
  constructor(
    inner: Orchestrator,
    { steps, name = inner?.name, description, recentWindow = 10 }: StepRulesOptions,
  ) {
    super({ agents: checked(inner).agents, name, description: joined(description) ?? inner.description });
    const owner = `Step rules '${this.name}'`;
    if (!Number.isInteger(recentWindow) || recentWindow < 1) {
      throw new ConfigurationError({ message: `${owner}: recentWindow must be a positive integer` });
    }
    this.inner = inner;
    this.recentWindow = recentWindow;
    this.#steps = compileSteps(
      owner,
      steps,
      this.agents.map((agent) => agent.name),
      recentWindow,
    );
    this.stepNames = this.#steps.map((step) => step.name);
    this.memoryKey = `steps:${this.name}`;
  }

  protected async handleMessage(conversation: Conversation): Promise<Decision> {
    const context = RequestContext.tryCurrent();
    const steps = this.#stepsOf(context?.config);
    const memory = context?.getMemory('session');
    const loaded = await this.#load(memory);
    if (isErrorMessage(loaded)) return loaded;
    const before = loaded ?? FRESH_STATE;
    const previous = steps.find((step) => step.name === before.activeStep);
    const counted = applyReplies(before, latestToolResults(conversation), previous, this.recentWindow);
    const { step, reason, state } = chooseStep(steps, counted, conversation, {
      newSession: loaded === undefined,
    });
    const allowed = allowedAgents(step, state.sequenceIndex, conversation.agents);
    const annotations: StepAnnotations = {
      stepReason: reason,
      allowedAgents: allowed.map((agent) => agent.name),
    };
    if (step) annotations.activeStep = step.name;
    annotateStep(conversation, annotations);
    if (loaded === undefined || JSON.stringify(state) !== JSON.stringify(loaded)) {
      const saved = await this.#save(memory, state);
      if (saved) return saved;
    }

    const narrowed: Conversation = { ...conversation, agents: allowed };
    const decision = await this.inner.decide(narrowed);
    const refused = refusedCalls(decision, conversation.agents, allowed);
    if (refused.length === 0 || !step) return decision;

    // One more chance: the wrapped orchestrator sees its refused calls answered with the reason.
    const refusal = {
      orchestrator: this.name,
      step: step.name,
      agents: refused.map((call) => call.agent),
      allowedAgents: allowed.map((agent) => agent.name),
      sequence: nextInSequence(step, state.sequenceIndex) === undefined ? undefined : step.sequence,
    };
    annotateStep(conversation, { refused: refusal.agents });
    const replies = refusalReplies(refused, refusalText(refusal));
    const retried = await this.inner.decide({
      ...narrowed,
      messages: [...conversation.messages, ...replies],
      lastResults: replies,
    });
    const refusedAgain = refusedCalls(retried, conversation.agents, allowed);
    if (refusedAgain.length === 0) return retried;
    return { error: new StepRefusedError({ ...refusal, agents: refusedAgain.map((call) => call.agent) }) };
  }

  /**
   * The steps of the turn's live configuration: this wrapper's `step-rules`
   * item (named after it) replaces the steps it was built with; an item
   * that no longer fits the agents leaves them in place.
   */
  #stepsOf(config: ConfigView | undefined): readonly CompiledStep[] {
    const item = config?.get('step-rules', this.name) as StepRulesItem | undefined;
    if (!config || !item) return this.#steps;
    let steps = this.#configured.get(config);
    if (!steps) {
      try {
        steps = compileSteps(
          `Step rules '${this.name}'`,
          item.steps,
          this.agents.map((agent) => agent.name),
          this.recentWindow,
        );
      } catch {
        steps = this.#steps;
      }
      this.#configured.set(config, steps);
    }
    return steps;
  }

  /** The session's stored state; `undefined` for a new session (or without a request context); an error when memory fails. */
  async #load(memory: Memory | undefined): Promise<StoredStepState | undefined | ErrorMessage> {
    if (!memory) return undefined;
    const stored = await memory.getContent(this.memoryKey);
    if (!stored.success) return this.#unavailable('read', stored.error);
    return parseStepState(stored.data);
  }

  async #save(memory: Memory | undefined, state: StoredStepState): Promise<ErrorMessage | undefined> {
    if (!memory) return undefined;
    const written = await memory.setContent(this.memoryKey, state);
    return written.success ? undefined : this.#unavailable('write', written.error);
  }

  /** Without its state the step is unknown: the decision fails rather than route unchecked. */
  #unavailable(operation: 'read' | 'write', cause: Error): ErrorMessage {
    return {
      error: new StoreUnavailableError({
        message: `Step rules '${this.name}' could not ${operation} the session's step state`,
        cause,
      }),
    };
  }
}

function checked(inner: Orchestrator): Orchestrator {
  if (typeof inner?.decide !== 'function' || !Array.isArray(inner.agents)) {
    throw new ConfigurationError({ message: 'withSteps: the first argument must be an orchestrator' });
  }
  return inner;
}

function joined(description: string | readonly string[] | undefined): string | undefined {
  return typeof description === 'string' || description === undefined ? description : description.join(' ');
}

/**
 * The calls of a decision that name a candidate agent the step does not
 * allow; a wrapped `AbstractOrchestrator` has already turned such a call
 * into an `UnknownAgentError`, which counts as the same refusal.
 */
function refusedCalls(
  decision: Decision,
  candidates: readonly AgentMeta[],
  allowed: readonly AgentMeta[],
): RefusedCall[] {
  const outside = (name: unknown): name is string =>
    typeof name === 'string' &&
    candidates.some((agent) => agent.name === name) &&
    !allowed.some((agent) => agent.name === name);
  if (isErrorMessage(decision)) {
    const { error } = decision;
    const agent = UnknownAgentError.isInstance(error) ? (error as UnknownAgentError).agent : undefined;
    return outside(agent) ? [{ agent, callId: createId('call') }] : [];
  }
  const calls = Array.isArray(decision) ? decision : [decision];
  return calls
    .filter((call) => outside(call?.toolName))
    .map((call) => ({
      agent: call.toolName,
      callId: typeof call.id === 'string' && call.id !== '' ? call.id : createId('call'),
    }));
}

function refusalReplies(refused: readonly RefusedCall[], text: string): ToolMessage[] {
  const createdAt = new Date().toISOString();
  return refused.map(({ agent, callId }) => ({
    id: createId('msg'),
    role: 'tool',
    name: agent,
    toolCallId: callId,
    content: text,
    status: 'error',
    createdAt,
    metadata: { stepRefused: true, errorDetail: text },
  }));
}

/**
 * Wraps an orchestrator in step rules: named steps, one active per session,
 * each narrowing the agents the orchestrator may call.
 *
 * **Which step is active** is decided before each decision (every hop):
 * 1. the successful replies to the previous decision are counted: each joins
 *    the session's recent calls (the last `recentWindow`, repeats kept), and
 *    one from the active step's next sequence agent advances the sequence;
 *    a failed reply counts for nothing;
 * 2. the first step, in order, whose `conditions` all hold becomes active;
 * 3. else the step already active stays active (AgentDock's rule: a step
 *    started by a `sequence_match` keeps running once its trigger is past);
 * 4. else the default step (a new session starts there); else no step, and
 *    every agent may be called.
 *
 * Changing step restarts the new step's sequence. A step without
 * conditions is active only as the default step.
 *
 * **What it allows**: while its `sequence` runs, only the sequence's next
 * agent (over `allowed` / `denied`); then the agents `allowed` lists (all
 * when it lists none) except those `denied` lists. `route_to_user` is always
 * allowed, and the narrowing never widens what the decision was offered.
 *
 * **A refused call**: when the wrapped orchestrator still calls an agent the
 * step does not allow, it is asked once more, its refused calls answered by
 * an error reply (`metadata.stepRefused: true`) saying what the step
 * allows; a second refusal fails the turn with a {@link StepRefusedError}.
 *
 * **State** (active step, recent calls, sequence position) lives in session
 * memory under `steps:<name>`, never on the instance, so it holds across
 * turns and replicas sharing a memory store; when it can be neither read nor
 * written the decision fails with a `StoreUnavailableError` rather than route
 * unchecked. Without a request context (a hand-built conversation) every
 * decision starts from a new session. Each decision's step is annotated
 * with `activeStep`, `stepReason` and `allowedAgents` (and `refused`), shown
 * in the turn's steps and on its decision span.
 *
 * @example
 * ```ts
 * const router = withSteps(new KeywordOrchestrator({ agents }), {
 *   steps: [
 *     { name: 'browse', description: 'Looking around', isDefault: true, denied: ['payment', 'confirm'] },
 *     {
 *       name: 'checkout',
 *       description: 'Address, payment, confirmation, in this order',
 *       conditions: [{ type: 'sequence_match', sequence: ['cart'] }],
 *       sequence: ['address', 'payment', 'confirm'],
 *       allowed: ['support'],
 *     },
 *   ],
 * });
 * // An AgentDock template's orchestration ports as it is:
 * const ported = withSteps(new LlmOrchestrator({ agents, model, client }), template.orchestration);
 * ```
 */
export function withSteps(orchestrator: Orchestrator, options: StepRulesOptions): StepRulesOrchestrator {
  return new StepRulesOrchestrator(orchestrator, options);
}
