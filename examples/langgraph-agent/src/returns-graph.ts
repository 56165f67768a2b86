import { AIMessage } from '@langchain/core/messages';
import {
  Annotation,
  type BaseCheckpointSaver,
  END,
  interrupt,
  MessagesAnnotation,
  START,
  StateGraph,
} from '@langchain/langgraph';
import type { LangGraphApprovalAnswer } from '@switchboard/runtime/langgraph';

/** Refunds above this amount wait for a person's approval. */
export const APPROVAL_LIMIT = 100;

/** The graph's state: the conversation, and the refund read from it. */
const ReturnsState = Annotation.Root({
  ...MessagesAnnotation.spec,
  request: Annotation<{ orderId: string; amount: number } | null>,
  approved: Annotation<boolean>,
});
type State = typeof ReturnsState.State;

const say = (text: string) => ({ messages: [new AIMessage(text)] });

/** Reads "refund 250 on order 42" from the last message. */
function read(state: State) {
  const text = String(state.messages.at(-1)?.content ?? '');
  const match = /(\d+(?:\.\d+)?)\D+?order\s+#?(\w+)/i.exec(text);
  if (!match)
    return { request: null, ...say('Tell me the amount and the order, e.g. "refund 30 on order 7".') };
  return { request: { amount: Number(match[1]), orderId: match[2]! } };
}

/** Asks a person; `interrupt()` returns their decision once the turn is resumed, on any replica. */
function review(state: State) {
  const { amount, orderId } = state.request!;
  const decision = interrupt<unknown, LangGraphApprovalAnswer>({
    action: 'refund',
    message: `Refund ${amount.toFixed(2)} on order ${orderId}?`,
    risk: 'high',
    reason: `over ${APPROVAL_LIMIT}`,
  });
  if (decision.approved) return { approved: true };
  return { approved: false, ...say(`The refund was not made (${decision.comment ?? decision.status}).`) };
}

function refund(state: State) {
  const { amount, orderId } = state.request!;
  return say(`Refunded ${amount.toFixed(2)} on order ${orderId}.`);
}

/**
 * The returns desk as a LangGraph.js graph: read the request, send refunds
 * over {@link APPROVAL_LIMIT} to a person (an `interrupt()`), then refund.
 * Compiled with `checkpointer`, which keeps each session's thread.
 */
export function returnsGraph(checkpointer: BaseCheckpointSaver) {
  return new StateGraph(ReturnsState)
    .addNode('read', read)
    .addNode('review', review)
    .addNode('refund', refund)
    .addEdge(START, 'read')
    .addConditionalEdges('read', (state) => {
      if (state.request === null) return END;
      return state.request.amount > APPROVAL_LIMIT ? 'review' : 'refund';
    })
    .addConditionalEdges('review', (state) => (state.approved ? 'refund' : END))
    .addEdge('refund', END)
    .compile({ checkpointer });
}
