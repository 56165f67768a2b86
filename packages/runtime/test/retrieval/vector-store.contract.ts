import { randomBytes } from 'node:crypto';
import { ValidationError } from '@switchboard/core';
import { afterAll, describe, expect, it } from 'vitest';
import type { ChunkingOptions } from '../../src/retrieval/chunking.js';
import type { VectorStoreLimits } from '../../src/retrieval/store-limits.js';
import type { RetrievalDocument, VectorStore } from '../../src/retrieval/vector-store.js';

/** Creates a store for the contract; each call may return a new one (the suite closes them all). */
export type VectorStoreFactory = (options?: VectorStoreLimits & ChunkingOptions) => Promise<VectorStore>;

export const CONTRACT_DOCUMENTS: RetrievalDocument[] = [
  {
    id: 'refunds',
    text: 'Refunds are paid back to the original card within five business days after the returned parcel arrives at our warehouse.',
    metadata: { lang: 'en', team: 'billing' },
  },
  {
    id: 'shipping',
    text: 'Parcels ship from the Rotterdam warehouse; express shipping reaches most European addresses in two days.',
    source: 'https://help.example/shipping',
    metadata: { lang: 'en', team: 'logistics' },
  },
  {
    id: 'passwords',
    text: 'To reset a forgotten password, open the login page, choose forgot password and follow the emailed link.',
    metadata: { lang: 'en', team: 'support' },
  },
  {
    id: 'garantie',
    text: 'Die Garantie gilt zwei Jahre ab Kaufdatum für alle Geräte.',
    metadata: { lang: 'de', team: 'support' },
  },
];

/** A collection name no other test uses. */
function fresh(): string {
  return `c-${randomBytes(4).toString('hex')}`;
}

/**
 * The `VectorStore` contract: what every store must do, whatever its
 * ranking (exact cosine or full-text).
 */
export function describeVectorStoreContract(label: string, create: VectorStoreFactory): void {
  describe(`VectorStore contract: ${label}`, () => {
    const stores: VectorStore[] = [];
    const open = async (options?: VectorStoreLimits & ChunkingOptions) => {
      const store = await create(options);
      stores.push(store);
      return store;
    };
    afterAll(async () => {
      await Promise.all(stores.map((store) => store.close?.()));
    });

    it('finds the relevant document first, with scores from 0 to 1, best first, and its source and metadata', async () => {
      const store = await open();
      const collection = fresh();
      expect(await store.add(CONTRACT_DOCUMENTS, { collection })).toMatchObject({ documents: 4 });
      const matches = await store.search('how long do refunds take to reach my card', { collection });
      expect(matches[0]).toMatchObject({
        id: 'refunds#0',
        documentId: 'refunds',
        source: 'refunds',
        metadata: { lang: 'en', team: 'billing' },
      });
      expect(matches[0]?.text).toContain('original card');
      for (const match of matches) expect(match.score).toBeGreaterThan(0);
      for (const match of matches) expect(match.score).toBeLessThanOrEqual(1);
      const scores = matches.map((match) => match.score);
      expect(scores).toEqual([...scores].sort((a, b) => b - a));
      const shipping = await store.search('express shipping to European addresses', { collection });
      expect(shipping[0]).toMatchObject({ documentId: 'shipping', source: 'https://help.example/shipping' });
    });

    it('returns at most topK matches and none below minScore', async () => {
      const store = await open();
      const collection = fresh();
      await store.add(CONTRACT_DOCUMENTS, { collection });
      const query = 'parcel warehouse refunds shipping password';
      const all = await store.search(query, { collection });
      expect(all.length).toBeGreaterThanOrEqual(3);
      expect(await store.search(query, { collection, topK: 2 })).toHaveLength(2);
      const [best, second] = all;
      const threshold = ((best?.score ?? 0) + (second?.score ?? 0)) / 2;
      const above = await store.search(query, { collection, minScore: threshold });
      expect(above.length).toBeGreaterThanOrEqual(1);
      expect(above.length).toBeLessThan(all.length);
      for (const match of above) expect(match.score).toBeGreaterThanOrEqual(threshold);
    });

    it('filters on metadata: a value matches equal metadata, an array any of its values', async () => {
      const store = await open();
      const collection = fresh();
      await store.add(CONTRACT_DOCUMENTS, { collection });
      const both = await store.search('parcel', { collection, filter: { team: ['billing', 'logistics'] } });
      expect(new Set(both.map((match) => match.documentId))).toEqual(new Set(['refunds', 'shipping']));
      const one = await store.search('parcel', { collection, filter: { team: 'logistics' } });
      expect(one.map((match) => match.documentId)).toEqual(['shipping']);
      expect(await store.search('parcel', { collection, filter: { lang: 'de' } })).toEqual([]);
      expect(await store.search('parcel', { collection, filter: { missing: 'x' } })).toEqual([]);
    });

    it('replaces a document added again under its id, and deletes by id', async () => {
      const store = await open();
      const collection = fresh();
      await store.add(CONTRACT_DOCUMENTS, { collection });
      await store.add(
        [{ id: 'refunds', text: 'Store credit is issued instead of money for opened software.' }],
        {
          collection,
        },
      );
      expect(await store.count({ collection })).toEqual({ documents: 4, chunks: 4 });
      const old = await store.search('original card within five business days', { collection });
      expect(old.map((match) => match.documentId)).not.toContain('refunds');
      const updated = await store.search('store credit for opened software', { collection });
      expect(updated[0]?.documentId).toBe('refunds');

      expect(await store.delete(['refunds', 'unknown'], { collection })).toBe(1);
      const gone = await store.search('store credit for opened software', { collection });
      expect(gone.map((match) => match.documentId)).not.toContain('refunds');
      expect((await store.count({ collection })).documents).toBe(3);
    });

    it('keeps tenants and collections apart', async () => {
      const store = await open();
      const collection = fresh();
      await store.add(CONTRACT_DOCUMENTS, { collection, tenantId: 'tenant-a' });
      expect(await store.search('refunds card', { collection, tenantId: 'tenant-b' })).toEqual([]);
      expect(await store.count({ collection, tenantId: 'tenant-b' })).toEqual({ documents: 0, chunks: 0 });
      expect(await store.search('refunds card', { collection: fresh(), tenantId: 'tenant-a' })).toEqual([]);
      await store.add([{ id: 'refunds', text: 'Tenant b refunds go to a voucher.' }], {
        collection,
        tenantId: 'tenant-b',
      });
      expect(await store.delete(['refunds'], { collection, tenantId: 'tenant-b' })).toBe(1);
      const stillThere = await store.search('refunds card', { collection, tenantId: 'tenant-a' });
      expect(stillThere[0]?.documentId).toBe('refunds');
      await expect(store.search('refunds', { tenantId: 'no spaces allowed' })).rejects.toThrow(
        ValidationError,
      );
    });

    it('splits long documents into chunks and finds the chunk that matches', async () => {
      const store = await open({ chunkSize: 200, overlap: 40 });
      const collection = fresh();
      const filler = 'The committee met on Tuesday and discussed the agenda at length. '.repeat(12);
      const text = `${filler}Finally, the lighthouse keeper reported a broken lantern on the northern pier.`;
      const added = await store.add([{ id: 'minutes', text }], { collection });
      expect(added.chunks).toBeGreaterThan(3);
      expect(await store.count({ collection })).toEqual({ documents: 1, chunks: added.chunks });
      const [match] = await store.search('lighthouse lantern northern pier', { collection });
      expect(match?.id).toMatch(/^minutes#[1-9]\d*$/);
      expect(match?.text).toContain('lighthouse keeper');
      expect(match?.text.length).toBeLessThanOrEqual(200);
    });

    it('refuses what exceeds its bounds with a ValidationError, storing nothing', async () => {
      const store = await open({
        maxDocuments: 3,
        maxDocumentChars: 500,
        maxQueryChars: 100,
        maxCollections: 2,
      });
      const collection = fresh();
      await expect(store.add(CONTRACT_DOCUMENTS, { collection })).rejects.toThrow(/limit is 3/);
      expect(await store.count({ collection })).toEqual({ documents: 0, chunks: 0 });
      const tooLong = { id: 'long', text: 'x '.repeat(300) };
      await expect(
        store.add([CONTRACT_DOCUMENTS[0] as RetrievalDocument, tooLong], { collection }),
      ).rejects.toThrow(ValidationError);
      expect(await store.count({ collection })).toEqual({ documents: 0, chunks: 0 });
      await store.add(CONTRACT_DOCUMENTS.slice(0, 3), { collection });
      // Replacing a known document is not growth.
      await store.add(CONTRACT_DOCUMENTS.slice(0, 1), { collection });
      await expect(store.add(CONTRACT_DOCUMENTS.slice(3), { collection })).rejects.toThrow(ValidationError);
      await expect(store.search('q'.repeat(101), { collection })).rejects.toThrow(/limit is 100/);
      await expect(store.search('   ', { collection })).rejects.toThrow(ValidationError);
      await expect(store.search('refunds', { collection, topK: 0 })).rejects.toThrow(ValidationError);
      await store.add(CONTRACT_DOCUMENTS.slice(0, 1), { collection: fresh() });
      await expect(store.add(CONTRACT_DOCUMENTS.slice(0, 1), { collection: fresh() })).rejects.toThrow(
        /limit is 2/,
      );
      expect((await store.count({ collection })).documents).toBe(3);
    });

    it('holds the document bound when adds race', async () => {
      const store = await open({ maxDocuments: 3 });
      const collection = fresh();
      const results = await Promise.allSettled([
        store.add(CONTRACT_DOCUMENTS.slice(0, 2), { collection }),
        store.add(CONTRACT_DOCUMENTS.slice(2, 4), { collection }),
      ]);
      expect(results.filter((result) => result.status === 'rejected')).toHaveLength(1);
      expect((await store.count({ collection })).documents).toBe(2);
    });
  });
}
