import { AIMessage } from '@langchain/core/messages';
import { FakeListChatModel } from '@langchain/core/utils/testing';
import { END, interrupt, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import type { BaseCheckpointSaver } from '@langchain/langgraph-checkpoint';
import type { LangGraphApprovalAnswer } from '../../src/langgraph.js';

/** What the model says before the review: streamed token by token. */
export const PLAN_TEXT = 'Checking the refund policy for order 42.';

/**
 * A small LangGraph.js graph: `plan` (a chat model, streamed) → `review`
 * (an `interrupt()` asking to approve a refund) → `END`. Each node run is
 * recorded in `runs` as `<label>:<node>`, so a test sees which replica ran what.
 */
export function refundGraph(checkpointer: BaseCheckpointSaver, runs: string[], label: string) {
  const model = new FakeListChatModel({ responses: [PLAN_TEXT] });
  return new StateGraph(MessagesAnnotation)
    .addNode('plan', async (state) => {
      runs.push(`${label}:plan`);
      return { messages: [await model.invoke(state.messages)] };
    })
    .addNode('review', () => {
      runs.push(`${label}:review`);
      const answer = interrupt<unknown, LangGraphApprovalAnswer>({
        action: 'refund',
        message: 'Refund 120 EUR for order 42?',
        risk: 'high',
        reason: 'over the 100 EUR threshold',
      });
      return {
        messages: [
          new AIMessage(
            answer.approved ? 'Refunded 120 EUR.' : `No refund (${answer.comment ?? answer.status}).`,
          ),
        ],
      };
    })
    .addEdge(START, 'plan')
    .addEdge('plan', 'review')
    .addEdge('review', END)
    .compile({ checkpointer });
}

/** A graph that asks the user a question, then greets them by the answer. */
export function questionGraph(checkpointer: BaseCheckpointSaver) {
  return new StateGraph(MessagesAnnotation)
    .addNode('ask', () => {
      const name = interrupt<unknown, string>({ question: 'What is your name?' });
      return { messages: [new AIMessage(`Hello, ${name}!`)] };
    })
    .addEdge(START, 'ask')
    .addEdge('ask', END)
    .compile({ checkpointer });
}
