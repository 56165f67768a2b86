/**
 * The PostgreSQL vector store (`@switchboard/runtime/postgres`): documents
 * for retrieval agents in a table shared by every replica, ranked by
 * pgvector's cosine when the extension is available, else by PostgreSQL's
 * full-text search. Requires the `postgres` peer dependency. Nothing
 * connects on import.
 * @module
 */
export {
  createPostgresVectorStore,
  PostgresVectorStore,
  type PostgresVectorStoreOptions,
} from './retrieval/postgres-vector-store.js';
