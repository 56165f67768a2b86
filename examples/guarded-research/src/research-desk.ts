import {
  AbstractOrchestrator,
  type AgentMeta,
  type Conversation,
  currentUserMessage,
  type Decision,
  latestToolResults,
  routeToUser,
  type ToolMessage,
  toolCall,
  turnMessages,
} from '@switchboard/core';
import { isCriticFeedback } from '@switchboard/orchestrators';
import { formatSources, parseSources } from './notes.js';

/** What the user reads when the search stayed busy through every retry. */
export const SEARCH_FAILED_MESSAGE =
  'Sorry, the library search is busy right now, so I could not research this. Please ask again in a moment.';

/** What the user reads when a guardrail refused the research task (a shell command, a path, code). */
export const REFUSED_TASK_MESSAGE =
  'I cannot research that: the question holds a command, a path or code that the research agent may not be given.';

/** "Compare A and B", "A vs B": the two things compared. */
const COMPARISON = /^\s*compare\s+(.+?)\s+(?:and|with|to|vs\.?|versus)\s+(.+?)[?.!\s]*$/i;

/** The replies of the turn from `agent` that succeeded. */
function okReplies(conversation: Conversation, agent: string): ToolMessage[] {
  return turnMessages(conversation).filter(
    (message): message is ToolMessage =>
      message.role === 'tool' && message.name === agent && message.status === 'ok',
  );
}

/** The sources of every research reply of the turn, numbered anew (one list after a fan-out). */
function researchNotes(replies: readonly ToolMessage[]): string {
  const byUrl = new Map(
    replies.flatMap((reply) => parseSources(reply.content)).map((source) => [source.url, source]),
  );
  return formatSources([...byUrl.values()]);
}

/**
 * The router inside the rails: quick, and cutting corners on purpose, as a
 * model-backed router may. It researches the question (a comparison as two
 * searches at once), then has the answer written straight from the
 * sources, skipping `reflect`, and answers with the writer's text. Told
 * that a call was refused, it does what the step allows; shown a critic's
 * feedback, it has the answer written again with the feedback. When the
 * research failed it says why: the search stayed busy, or a guardrail
 * refused the task.
 *
 * Each rail of the app catches one of its shortcuts: the step rules keep
 * `reflect` in the sequence, the critic sends back an answer without
 * citations, the `conservative` profile refuses the two searches at once.
 * It keeps no state: it reads where the turn stands from its messages.
 */
export class ResearchDesk extends AbstractOrchestrator {
  constructor({ agents, name = 'research-desk' }: { agents: readonly AgentMeta[]; name?: string }) {
    super({ name, agents, description: 'Researches a question in the library and answers it with sources' });
  }

  protected handleMessage(conversation: Conversation): Decision {
    const question = currentUserMessage(conversation).content;
    const latest = latestToolResults(conversation);
    const feedback = latest.find(isCriticFeedback);
    if (feedback) {
      const instructions = `Write the answer again, citing the sources as [n]. Reviewer: ${feedback.metadata.issues.join(' ')}`;
      return toolCall('answer', this.#answerTask(conversation, question, instructions), {
        reason: 'the critic sent the answer back',
      });
    }
    const refused = latest.find((reply) => reply.metadata?.stepRefused === true);
    const allowed = conversation.agents[0]?.name;
    if (refused && allowed) {
      // The step rules refused the shortcut and offer only what the step allows: call that.
      return toolCall(allowed, this.#taskFor(allowed, conversation, question), {
        reason: `the step rules refused '${refused.name}' and allow '${allowed}'`,
      });
    }

    const research = okReplies(conversation, 'research');
    if (research.length === 0) {
      const failed = latest.find((reply) => reply.name === 'research');
      if (failed?.metadata?.errorCode === 'blocked') {
        return routeToUser(REFUSED_TASK_MESSAGE, { reason: 'a guardrail refused the research task' });
      }
      if (failed) return routeToUser(SEARCH_FAILED_MESSAGE, { reason: 'the research failed' });
      const compared = COMPARISON.exec(question);
      if (compared) {
        return [compared[1]!, compared[2]!].map((subject) =>
          toolCall('research', subject, { reason: 'one search per thing compared' }),
        );
      }
      return toolCall('research', question, { reason: 'a new question' });
    }
    const [reply] = latest;
    if (reply?.name === 'answer' && reply.status === 'ok') {
      return routeToUser(reply.content, { reason: 'the answer is written' });
    }
    return toolCall('answer', this.#taskFor('answer', conversation, question), {
      reason: 'the research is in',
      thought: 'Sources found: write the answer straight away',
    });
  }

  /** The task of `agent` at this point of the turn. */
  #taskFor(agent: string, conversation: Conversation, question: string): string {
    if (agent === 'research') return question;
    if (agent === 'reflect')
      return `Question: ${question}\n\n${researchNotes(okReplies(conversation, 'research'))}`;
    return this.#answerTask(conversation, question, 'Write a short answer.');
  }

  /** The writer's task: the question, the sources, the latest gaps if any, and what to do. */
  #answerTask(conversation: Conversation, question: string, instructions: string): string {
    const gaps = okReplies(conversation, 'reflect').at(-1)?.content;
    return [
      `Question: ${question}`,
      researchNotes(okReplies(conversation, 'research')),
      ...(gaps ? [gaps] : []),
      `Instructions: ${instructions}`,
    ].join('\n\n');
  }
}
