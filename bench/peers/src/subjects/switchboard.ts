// Switchboard: three agents routed by the keyword orchestrator, in-memory session store (history per session).
// Each agent awaits a mock model that sees the conversation, as an LLM agent would.
import { KeywordOrchestrator } from '@switchboard/orchestrators';
import { App, defineAgent } from '@switchboard/runtime';
import { AGENTS, type AgentName, modelReply, type SubjectFactory } from '../workload.js';

/** The mock model: answers after an `await`, from the history it is given. */
const mockModel = async (agent: AgentName, messages: readonly { role: string }[]) =>
  modelReply(agent, messages.filter((message) => message.role === 'user').length);

/** Switchboard on the workload; over HTTP it serves its own POST /v1/chat. */
export const switchboardSubject: SubjectFactory = ({ http }) => {
  const agents = AGENTS.map((name) =>
    defineAgent({
      name,
      description: `Answers ${name} questions`,
      keywords: [name],
      run: (_message, { conversation }) => mockModel(name, conversation.messages),
    }),
  );
  const app = new App({ name: 'peers', agents, logger: () => {} });
  const orchestrator = new KeywordOrchestrator({ name: 'peers', agents: app.agentMetas });
  if (!http) app.mount(orchestrator);
  return {
    async turn(sessionId, message) {
      return (await app.chat({ sessionId, message })).reply;
    },
    async listen() {
      const server = await app.start(orchestrator, { port: 0 });
      return { url: server.url, close: () => server.close() };
    },
    close: () => app.close(),
  };
};
