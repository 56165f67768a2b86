import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { spawnListening } from '../../../packages/runtime/test/support/spawn-listening.js';

const main = fileURLToPath(new URL('../src/main.ts', import.meta.url));

/** Starts `src/main.ts` as `pnpm start` does (node with tsx) on a free port; resolves once it listens. */
const startMain = () => spawnListening(main);

describe('src/main.ts, as the README shows it', () => {
  it.each(['SIGTERM', 'SIGINT'] as const)('serves, then closes and exits 0 on %s', async (signal) => {
    const { child, url, exited, stderr } = await startMain();
    const response = await fetch(`${url}/v1/chat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ message: 'hi' }),
    });
    expect(((await response.json()) as { reply: string }).reply).toBe('Hello! Nice to meet you.');

    child.kill(signal);
    // Killed by the signal, the exit would be [null, signal]: the handler closed the server and exited.
    expect(await exited).toEqual([0, null]);
    expect(stderr()).toBe('');
    await expect(fetch(`${url}/v1/chat`, { method: 'POST' })).rejects.toThrow();
  });
});
