import OpenAI from 'openai';
import { afterAll, describe, expect, it } from 'vitest';
import { hashedEmbedding } from '../../src/testing/scripted-embeddings.js';
import { createScriptedModelServer } from '../../src/testing/scripted-model-server.js';

const server = await createScriptedModelServer();
const client = new OpenAI({ apiKey: 'test', baseURL: server.url, maxRetries: 0 });
afterAll(() => server.close());

const cosine = (a: readonly number[], b: readonly number[]) =>
  a.reduce((sum, value, index) => sum + value * (b[index] ?? 0), 0);

describe('the scripted model server: /v1/embeddings', () => {
  it('answers with the same unit vectors every time, nearer for texts that share words', async () => {
    const texts = ['refund my broken order', 'how do refunds of an order work', 'weather forecast for Oslo'];
    const first = await client.embeddings.create({ model: 'hash-embed', input: texts });
    const again = await client.embeddings.create({
      model: 'hash-embed',
      input: texts,
      encoding_format: 'float',
    });
    const vectors = first.data.map((item) => Array.from(item.embedding));
    expect(vectors.map((vector) => vector.length)).toEqual([512, 512, 512]);
    for (const vector of vectors) expect(Math.hypot(...vector)).toBeCloseTo(1, 5);
    again.data.forEach((item, index) => {
      expect(Array.from(item.embedding).map((value) => Math.fround(value))).toEqual(vectors[index]);
    });
    const [order, refunds, weather] = vectors as [number[], number[], number[]];
    expect(cosine(order, refunds)).toBeGreaterThan(0.3);
    expect(cosine(order, refunds)).toBeGreaterThan(cosine(order, weather) + 0.3);
    expect(first.usage.prompt_tokens).toBeGreaterThan(0);
  });

  it('honours dimensions, takes no script entry, and rejects a malformed request with a 400', async () => {
    const sized = await client.embeddings.create({
      model: 'hash-embed',
      input: 'hello world',
      dimensions: 32,
    });
    expect(sized.data[0]?.embedding).toHaveLength(32);
    expect(Array.from(sized.data[0]?.embedding ?? []).map(Math.fround)).toEqual(
      hashedEmbedding('hello world', 32).map(Math.fround),
    );
    expect(server.remaining).toBe(0);
    await expect(client.embeddings.create({ model: 'hash-embed', input: [] })).rejects.toMatchObject({
      status: 400,
    });
    expect(server.problems.at(-1)).toMatch(/input/);
  });
});
