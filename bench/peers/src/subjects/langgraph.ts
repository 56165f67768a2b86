// LangGraph.js: a router graph (a conditional edge from START picks one of three agent nodes), each node calls a
// FakeListChatModel whose answer counts the user messages it was given. History per session: MemorySaver (a checkpoint per thread), or, without it, a Map the bench
// keeps and passes in full on every invoke.
import { type BaseMessage, HumanMessage } from '@langchain/core/messages';
import type { ChatResult } from '@langchain/core/outputs';
import { FakeListChatModel } from '@langchain/core/utils/testing';
import { END, MemorySaver, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { AGENTS, type AgentName, modelReply, route, type SubjectFactory } from '../workload.js';

/** LangGraph's fake chat model, answering from the history it sees (synchronously, as the fake does). */
class HistoryAwareFakeModel extends FakeListChatModel {
  readonly #agent: AgentName;

  constructor(agent: AgentName) {
    super({ responses: [''] });
    this.#agent = agent;
  }

  override async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    const userMessages = messages.filter((message) => HumanMessage.isInstance(message)).length;
    return { generations: [this._formatGeneration(modelReply(this.#agent, userMessages))], llmOutput: {} };
  }
}

/** LangGraph.js on the workload, with or without `MemorySaver`. */
export const langGraphSubject: SubjectFactory = ({ frameworkMemory }) => {
  const node = (agent: AgentName) => {
    const model = new HistoryAwareFakeModel(agent);
    return async (state: typeof MessagesAnnotation.State) => ({
      messages: [await model.invoke(state.messages)],
    });
  };
  const graph = new StateGraph(MessagesAnnotation)
    .addNode('billing', node('billing'))
    .addNode('weather', node('weather'))
    .addNode('travel', node('travel'))
    .addConditionalEdges(START, (state) => route(String(state.messages.at(-1)?.content ?? '')), [...AGENTS])
    .addEdge('billing', END)
    .addEdge('weather', END)
    .addEdge('travel', END)
    .compile(frameworkMemory ? { checkpointer: new MemorySaver() } : {});

  if (frameworkMemory) {
    return {
      async turn(sessionId, message) {
        const state = await graph.invoke(
          { messages: [new HumanMessage(message)] },
          { configurable: { thread_id: sessionId } },
        );
        return String(state.messages.at(-1)?.content);
      },
    };
  }
  const histories = new Map<string, BaseMessage[]>();
  return {
    async turn(sessionId, message) {
      const history = histories.get(sessionId) ?? [];
      const state = await graph.invoke({ messages: [...history, new HumanMessage(message)] });
      histories.set(sessionId, state.messages);
      return String(state.messages.at(-1)?.content);
    },
  };
};
