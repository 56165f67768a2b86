import { ConfigurationError } from '@switchboard/core';
import { describe, expect, it } from 'vitest';
import { createPostgresVectorStore } from '../../src/postgres.js';
import { usePostgres } from '../support/postgres.js';
import { describeVectorStoreContract } from './vector-store.contract.js';

const postgres = usePostgres();

// Each store gets a schema of its own, so that per-tenant counts (maxCollections) start from nothing.
describeVectorStoreContract('PostgreSQL, full-text ranking', (options) =>
  createPostgresVectorStore({
    sql: postgres.sql,
    schema: postgres.schema(),
    ranking: 'full-text',
    ...options,
  }),
);

describe('createPostgresVectorStore', () => {
  it('ranks by full text when there is no embedder, and says so', async () => {
    const store = await createPostgresVectorStore({ sql: postgres.sql, schema: postgres.schema() });
    expect(store.ranking).toBe('full-text');
  });

  it('refuses bad names and contradictory options before connecting', async () => {
    await expect(createPostgresVectorStore({ sql: postgres.sql, table: 'Robert"; drop' })).rejects.toThrow(
      ConfigurationError,
    );
    await expect(createPostgresVectorStore({ sql: postgres.sql, ranking: 'cosine' })).rejects.toThrow(
      /embedder/,
    );
    await expect(createPostgresVectorStore({})).rejects.toThrow(/url or sql/);
  });

  it('keeps the documents in the table for a second store (another replica) to search', async () => {
    const schema = postgres.schema();
    const writer = await createPostgresVectorStore({ sql: postgres.sql, schema });
    await writer.add([{ id: 'faq', text: 'Invoices are emailed on the first working day of each month.' }]);
    const reader = await createPostgresVectorStore({ sql: postgres.sql, schema });
    const [match] = await reader.search('when are invoices emailed?');
    expect(match).toMatchObject({ documentId: 'faq', source: 'faq' });
  });
});
