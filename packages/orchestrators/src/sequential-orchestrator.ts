import {
  AbstractOrchestrator,
  type AgentLike,
  annotateStep,
  ConfigurationError,
  type Conversation,
  currentUserMessage,
  type Decision,
  routeToUser,
  type ToolMessage,
  toolCall,
  turnMessages,
} from '@switchboard/core';

/** Options of {@link SequentialOrchestrator}. */
export interface SequentialOrchestratorOptions {
  /** Default `sequential`. */
  name?: string;
  description?: string;
  /** The agents it routes to: the agents themselves (`defineAgent`, `llmAgent`, …) or their metadata (`app.agentMetas`). */
  agents: readonly AgentLike[];
  /**
   * The agents' names in pipeline order; an agent may appear more than once.
   * Default: every agent, in declared order. Naming an unknown agent fails at
   * construction.
   */
  pipeline?: readonly string[];
}

/** Where a turn stands in the pipeline. */
interface PipelinePosition {
  /** The index of the next stage to run (`pipeline.length` when every stage ran). */
  next: number;
  /** The stage that produced the latest reply, if any. */
  last?: { index: number; reply: ToolMessage };
}

/**
 * A pipeline: the first agent gets the user's message, each next agent gets
 * the previous one's output, and the user gets the last one's. A failed stage
 * (or one that returns nothing) stops the pipeline, and the user is told
 * which stage failed, never the agent's error text.
 *
 * The position in the pipeline is read from the current turn's agent replies,
 * not kept on the instance, so one instance serves concurrent sessions and
 * several replicas. Each call's step is annotated with `{ stage, stages }`
 * (1-based). A wrapper that narrows the candidate agents skips the stages it
 * does not offer; the skipped stages are annotated as `skipped`.
 *
 * @example
 * ```ts
 * const pipeline = new SequentialOrchestrator({
 *   agents: app.agentMetas,
 *   pipeline: ['researcher', 'writer', 'translator'],
 * });
 * await app.start(pipeline);
 * ```
 */
export class SequentialOrchestrator extends AbstractOrchestrator {
  /** The agents' names, in pipeline order. */
  readonly pipeline: readonly string[];

  constructor({ name = 'sequential', description, agents, pipeline }: SequentialOrchestratorOptions) {
    super({ name, description, agents });
    const known = this.agents.map((agent) => agent.name);
    const stages = pipeline ?? known;
    if (!Array.isArray(stages) || stages.length === 0) {
      throw new ConfigurationError({
        message: `SequentialOrchestrator '${name}' needs a pipeline of at least one agent; known agents: ${known.join(', ') || '(none)'}`,
      });
    }
    const unknown = stages.filter((stage) => !known.includes(stage));
    if (unknown.length > 0) {
      throw new ConfigurationError({
        message: `Pipeline of orchestrator '${name}' names unknown agent(s) ${unknown.map((stage) => `'${stage}'`).join(', ')}; known agents: ${known.join(', ') || '(none)'}`,
      });
    }
    this.pipeline = Object.freeze([...stages]);
  }

  protected handleMessage(conversation: Conversation): Decision {
    const stages = this.pipeline.length;
    const position = this.#position(conversation);
    const { last } = position;
    if (last && (last.reply.status === 'error' || !last.reply.content.trim())) {
      annotateStep(conversation, { failedStage: last.index + 1, stages });
      return routeToUser(this.stageFailureMessage(last.index, last.reply), {
        reason: `pipeline stopped: stage ${last.index + 1} of ${stages} (${last.reply.name}) ${last.reply.status === 'error' ? 'failed' : 'returned nothing'}`,
        thought: `Stage ${last.index + 1} gave no usable output, so the later stages cannot run`,
      });
    }
    const offered = new Set(conversation.agents.map((agent) => agent.name));
    const skipped: string[] = [];
    let next = position.next;
    while (next < stages && !offered.has(this.pipeline[next] as string))
      skipped.push(this.pipeline[next++] as string);
    if (next < stages) {
      const agent = this.pipeline[next] as string;
      const input = last ? last.reply.content : currentUserMessage(conversation).content;
      annotateStep(
        conversation,
        skipped.length ? { stage: next + 1, stages, skipped } : { stage: next + 1, stages },
      );
      return toolCall(agent, input, {
        reason: `pipeline stage ${next + 1} of ${stages}`,
        thought: last
          ? `Passing the output of ${last.reply.name} (stage ${last.index + 1}) to ${agent}`
          : `Starting the pipeline with ${agent}`,
      });
    }
    if (skipped.length) annotateStep(conversation, { stages, skipped });
    if (!last) {
      return routeToUser(
        'Sorry, none of the steps needed to answer this are available right now. Please try again later.',
        { reason: 'no pipeline stage among the candidate agents', thought: 'Every stage was skipped' },
      );
    }
    return routeToUser(last.reply.content, {
      reason: `pipeline completed: answered by ${last.reply.name}`,
      thought: `Returning the output of the last stage (${last.index + 1} of ${stages}) to the user`,
    });
  }

  /**
   * Replays the current turn's agent replies against the pipeline: each reply
   * moves to the next stage run by its agent. Derived from the conversation
   * alone, so any replica continues a turn where it stands.
   */
  #position(conversation: Conversation): PipelinePosition {
    const position: PipelinePosition = { next: 0 };
    for (const message of turnMessages(conversation)) {
      if (message.role !== 'tool') continue;
      const index = this.pipeline.indexOf(message.name, position.next);
      if (index < 0) continue;
      position.last = { index, reply: message };
      position.next = index + 1;
    }
    return position;
  }

  /** What the user sees when stage `index` (0-based) failed. Its error detail stays in the trace. */
  protected stageFailureMessage(index: number, reply: ToolMessage): string {
    const what = reply.status === 'error' ? 'ran into a problem' : 'returned nothing';
    return `Sorry, I could not finish this: step ${index + 1} of ${this.pipeline.length} (the ${reply.name} agent) ${what}, so the steps after it did not run. Please try again in a moment.`;
  }
}
