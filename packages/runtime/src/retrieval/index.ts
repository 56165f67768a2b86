/**
 * Retrieval: the `VectorStore` contract, the in-memory store, the `openai`
 * embedder and the ready-made `retrievalAgent`. The PostgreSQL store is in
 * `@switchboard/runtime/postgres`.
 * @module
 */
export { type ChunkingOptions, chunkText } from './chunking.js';
export {
  type Embedder,
  type EmbeddingsClient,
  type OpenAIEmbedderOptions,
  openAIEmbedder,
} from './embedder.js';
export { InMemoryVectorStore, type InMemoryVectorStoreOptions } from './memory-vector-store.js';
export { type RetrievalAgentOptions, retrievalAgent } from './retrieval-agent.js';
export {
  type RetrievalBundle,
  RetrievalBundleSchema,
  type RetrievalItem,
  RetrievalItemSchema,
  retrievalBundleOf,
} from './retrieval-bundle.js';
export type { RetrievalSummaryOptions } from './retrieval-summary.js';
export type { VectorStoreLimits } from './store-limits.js';
export type {
  AddResult,
  CollectionCount,
  CollectionOptions,
  MetadataFilter,
  MetadataValue,
  RetrievalDocument,
  RetrievalMatch,
  SearchOptions,
  VectorStore,
} from './vector-store.js';
