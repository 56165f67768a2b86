import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { spawnListening } from '../../../packages/runtime/test/support/spawn-listening.js';

const main = fileURLToPath(new URL('../src/main.ts', import.meta.url));

describe('src/main.ts, as the README starts it', () => {
  it('serves a refund through the LangGraph graph, then closes and exits 0 on SIGTERM', async () => {
    const { child, url, exited, stderr } = await spawnListening(main, { REDIS_URL: '' });
    const response = await fetch(`${url}/v1/chat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ message: 'refund 30 on order 7' }),
    });
    expect(((await response.json()) as { reply: string }).reply).toBe('Refunded 30.00 on order 7.');
    child.kill('SIGTERM');
    expect(await exited).toEqual([0, null]);
    expect(stderr()).toBe('');
  });
});
