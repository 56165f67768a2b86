import { trace } from '@opentelemetry/api';
import { ConfigurationError } from '@switchboard/core';
import { z } from 'zod';
import { defineAgent } from '../agents/agent.js';
import type { Agent, AgentContext, AgentReplyWithMetadata } from '../agents/agent-contract.js';
import { AgentInputError } from '../agents/agent-schemas.js';
import { observe } from '../tracing/observe.js';
import { plainJson, SpanAttribute } from '../tracing/span-attributes.js';
import { bundleText, itemsOf, type RetrievalBundle, snippetSummary, sourcesOf } from './retrieval-bundle.js';
import { modelSummarizer, type RetrievalSummaryOptions } from './retrieval-summary.js';
import { MAX_TOP_K } from './store-limits.js';
import type { MetadataFilter, RetrievalMatch, VectorStore } from './vector-store.js';

/** Options of {@link retrievalAgent}. */
export interface RetrievalAgentOptions {
  name: string;
  /** Default: "Finds passages relevant to a question in the document store, with scores and sources". */
  description?: string;
  keywords?: string[];
  /** The store searched; it embeds the query with its own embedder. */
  store: VectorStore;
  /** The most items in the bundle (1 to 100). Default 20. */
  topK?: number;
  /** Items scoring below this (0 to 1) are left out. Default 0. */
  minScore?: number;
  /** The collection searched within the request's tenant. Default `default`. */
  collection?: string;
  /** A filter applied to every search (a call's own `input.filter` is added to it). */
  filter?: MetadataFilter;
  /** A model that writes the summary; without one, the summary is the top snippets. */
  summarize?: RetrievalSummaryOptions;
  /** Characters of each item's text kept in the bundle. Default 500. */
  snippetChars?: number;
}

interface SearchInput {
  query: string;
  topK: number;
  collection: string;
  filter?: MetadataFilter;
}

const MetadataValueSchema = z.union([z.string(), z.number(), z.boolean()]);

/** What a call may pass as structured `input`: all optional; the message is the query otherwise. */
const RetrievalInputSchema = z
  .object({
    query: z.string().min(1).optional(),
    topK: z.number().int().min(1).max(MAX_TOP_K).optional(),
    filter: z.record(z.string(), z.union([MetadataValueSchema, z.array(MetadataValueSchema)])).optional(),
  })
  .strict();

function checkOptions({
  name,
  store,
  topK,
  minScore,
  snippetChars,
}: Required<Pick<RetrievalAgentOptions, 'topK' | 'minScore' | 'snippetChars'>> &
  RetrievalAgentOptions): void {
  const owner = `retrievalAgent '${name}'`;
  if (typeof store?.search !== 'function' || typeof store.add !== 'function')
    throw new ConfigurationError({
      message: `${owner} needs a VectorStore (e.g. new InMemoryVectorStore({ embed }))`,
    });
  if (!Number.isInteger(topK) || topK < 1 || topK > MAX_TOP_K)
    throw new ConfigurationError({ message: `${owner}: topK must be an integer from 1 to ${MAX_TOP_K}` });
  if (typeof minScore !== 'number' || !(minScore >= 0 && minScore <= 1))
    throw new ConfigurationError({ message: `${owner}: minScore must be a number from 0 to 1` });
  if (!Number.isInteger(snippetChars) || snippetChars < 20)
    throw new ConfigurationError({ message: `${owner}: snippetChars must be an integer of at least 20` });
}

/**
 * A ready-made agent that searches a {@link VectorStore} and answers with a
 * bundle: at most `topK` items (default 20), best first, each with a score
 * in 0–1 and its source; the distinct sources; and a summary, written by
 * the `summarize` model when given one, else the top three snippets. The
 * reply's text lists them for a reader; the same bundle is the reply's
 * `metadata.data` for the orchestrator (read it with `retrievalBundleOf`).
 *
 * The message is the query; a call's structured `input` may instead give
 * `{ query?, topK?, filter? }`. Searches stay within the request's tenant
 * (the collection `collection` of `request.tenantId`). Each search is a
 * `retriever` observation (span `retrieve`) under the agent's span, its
 * input the query and its output the items' ids, sources and scores; a
 * summary is a generation under the agent's span.
 *
 * @example
 * ```ts
 * const store = new InMemoryVectorStore({ embed: openAIEmbedder({ model: 'text-embedding-3-small', apiKey }) });
 * await store.add(documents);
 * const docs = retrievalAgent({ name: 'docs', store, topK: 5, minScore: 0.2 });
 * new App({ name: 'desk', agents: [docs, writer] });
 * ```
 */
export function retrievalAgent(options: RetrievalAgentOptions): Agent {
  const {
    name,
    description = 'Finds passages relevant to a question in the document store, with scores and sources',
    keywords,
    store,
    topK = 20,
    minScore = 0,
    collection = 'default',
    filter: baseFilter,
    summarize,
    snippetChars = 500,
  } = options;
  checkOptions({ ...options, topK, minScore, snippetChars });
  const summarizer = summarize ? modelSummarizer(`retrievalAgent '${name}'`, summarize) : undefined;

  /** One search as a `retriever` observation; its argument is what the span records as input. */
  function searchTraced(input: SearchInput, context: AgentContext): Promise<RetrievalMatch[]> {
    const traced = observe(
      async ({ query, topK: wanted, filter }: SearchInput) => {
        const matches = await store.search(query, {
          topK: wanted,
          minScore,
          filter,
          collection,
          tenantId: context.request.tenantId,
          signal: context.signal,
        });
        const span = trace.getActiveSpan();
        if (span?.isRecording()) {
          span.setAttribute('switchboard.retrieval.ranking', store.ranking);
          span.setAttribute('switchboard.retrieval.matches', matches.length);
          const output = matches.map(({ id, source, score }) => ({ id, source, score }));
          span.setAttribute(SpanAttribute.observationOutput, plainJson(output));
        }
        return matches;
      },
      // The output recorded is the matches' ids, sources and scores: their texts are in the agent's reply.
      { name: 'retrieve', type: 'retriever', captureOutput: false },
    );
    return traced(input);
  }

  async function run(message: string, context: AgentContext): Promise<AgentReplyWithMetadata> {
    const parsed = RetrievalInputSchema.safeParse(context.toolCall.input ?? {});
    if (!parsed.success)
      throw new AgentInputError({
        agent: name,
        message: `invalid input: ${parsed.error.issues.map((issue) => `${issue.path.join('.') || 'input'}: ${issue.message}`).join('; ')}`,
      });
    const query = (parsed.data.query ?? message).trim();
    const filter = baseFilter || parsed.data.filter ? { ...parsed.data.filter, ...baseFilter } : undefined;
    const wanted = Math.min(parsed.data.topK ?? topK, topK);
    const matches = await searchTraced({ query, topK: wanted, collection, filter }, context);
    const items = itemsOf(matches, snippetChars);
    const bundle: RetrievalBundle = {
      kind: 'retrieval',
      query,
      items,
      sources: sourcesOf(items),
      summary: snippetSummary(items),
      summarizedBy: 'snippets',
      ranking: store.ranking,
    };
    const metadata: Record<string, unknown> = { data: bundle };
    if (summarizer && items.length > 0) {
      const written = await summarizer(query, items, context.signal);
      if (written.text) {
        bundle.summary = written.text;
        bundle.summarizedBy = 'model';
      }
      if (written.usage) metadata.usage = written.usage;
    }
    return { content: bundleText(bundle), metadata };
  }

  return defineAgent({ name, description, ...(keywords ? { keywords } : {}), run });
}
