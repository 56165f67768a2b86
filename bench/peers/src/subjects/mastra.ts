// Mastra: three `Agent`s, each with a mock AI SDK v2 model; the bench routes on the keyword (Mastra has no
// keyword router; its agent networks route with a model). History per session: Mastra `Memory` over its
// in-process `InMemoryStore` (thread = session), or, without it, a Map the bench keeps and passes in full.
import { Agent } from '@mastra/core/agent';
import { InMemoryStore } from '@mastra/core/storage';
import { Memory } from '@mastra/memory';
import type { LanguageModel } from 'ai';
import { AGENTS, type AgentName, modelReply, route, type SubjectFactory } from '../workload.js';

type Chunk = Record<string, unknown>;

/**
 * A LanguageModelV2 that answers at once and records nothing (the AI SDK's MockLanguageModelV2 keeps every
 * call, which would count as Mastra's heap).
 */
function mockModel(agent: AgentName): LanguageModel {
  type CallOptions = { prompt: { role: string }[] };
  const answer = ({ prompt }: CallOptions) =>
    modelReply(agent, prompt.filter((message) => message.role === 'user').length);
  const usage = { inputTokens: 10, outputTokens: 8, totalTokens: 18 };
  return {
    specificationVersion: 'v2',
    provider: 'mock',
    modelId: `mock-${agent}`,
    supportedUrls: {},
    async doGenerate(options: CallOptions) {
      return {
        content: [{ type: 'text', text: answer(options) }],
        finishReason: 'stop',
        usage,
        warnings: [],
      };
    },
    async doStream(options: CallOptions) {
      const chunks: Chunk[] = [
        { type: 'stream-start', warnings: [] },
        { type: 'text-start', id: '1' },
        { type: 'text-delta', id: '1', delta: answer(options) },
        { type: 'text-end', id: '1' },
        { type: 'finish', finishReason: 'stop', usage },
      ];
      const stream = new ReadableStream<Chunk>({
        start(controller) {
          for (const chunk of chunks) controller.enqueue(chunk);
          controller.close();
        },
      });
      return { stream };
    },
  } as unknown as LanguageModel;
}

/** Mastra on the workload, with or without `Memory`. */
export const mastraSubject: SubjectFactory = ({ frameworkMemory }) => {
  const memory = frameworkMemory
    ? new Memory({
        storage: new InMemoryStore(),
        options: { lastMessages: 50, semanticRecall: false, threads: { generateTitle: false } },
      })
    : undefined;
  const agents = new Map(
    AGENTS.map((name) => [
      name,
      new Agent({
        name,
        instructions: `You answer ${name} questions.`,
        model: mockModel(name) as never,
        ...(memory ? { memory } : {}),
      }),
    ]),
  );
  const agentFor = (message: string) => agents.get(route(message))!;

  if (memory) {
    return {
      async turn(sessionId, message) {
        const result = await agentFor(message).generate(message, {
          memory: { thread: sessionId, resource: 'bench-user' },
        });
        return result.text;
      },
    };
  }
  type Message = { role: 'user'; content: string } | { role: 'assistant'; content: string };
  const histories = new Map<string, Message[]>();
  return {
    async turn(sessionId, message) {
      const history = histories.get(sessionId) ?? [];
      history.push({ role: 'user', content: message });
      histories.set(sessionId, history);
      const result = await agentFor(message).generate(history);
      history.push({ role: 'assistant', content: result.text });
      return result.text;
    },
  };
};
