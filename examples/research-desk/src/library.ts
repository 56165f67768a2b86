import { InMemoryVectorStore, openAIEmbedder, type VectorStore } from '@switchboard/runtime';
import { DOCUMENTS } from './documents.js';

/** Options of {@link openLibrary}. */
export interface LibraryOptions {
  /** The embedding model, e.g. `text-embedding-3-small`. */
  embeddingModel: string;
  apiKey: string;
  baseURL?: string;
  /** A PostgreSQL connection string: the library lives in a table there (pgvector when installed, else full-text). */
  databaseUrl?: string;
  /** The PostgreSQL schema of its table. Default `public`. */
  schema?: string;
}

/** Opens the desk's library (in memory, or on PostgreSQL) and adds its documents (again: a known id is replaced). */
export async function openLibrary({
  embeddingModel,
  apiKey,
  baseURL,
  databaseUrl,
  schema,
}: LibraryOptions): Promise<VectorStore> {
  const embed = openAIEmbedder({ model: embeddingModel, apiKey, baseURL });
  const store = databaseUrl
    ? await (await import('@switchboard/runtime/postgres')).createPostgresVectorStore({
        url: databaseUrl,
        schema,
        table: 'research_desk_library',
        embed,
      })
    : new InMemoryVectorStore({ embed });
  await store.add(DOCUMENTS);
  return store;
}
