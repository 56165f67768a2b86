import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { App } from '@switchboard/runtime';
import { describe, expect, it } from 'vitest';
import { greeter, reverser } from '../src/agents.js';
import { KeywordRouter } from '../src/keyword-router.js';

const source = fileURLToPath(new URL('../src/openai-client.ts', import.meta.url));

/** Runs `src/openai-client.ts` as a user does (node with tsx) and resolves with what it printed. */
function runClient(
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', source], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => {
    stdout += chunk;
  });
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
  });
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, stdout, stderr })));
}

/** True when `block` is a run of consecutive lines of `text`. */
function isExcerptOf(block: string, text: string): boolean {
  const wanted = block.replace(/\n$/, '').split('\n');
  const lines = text.split('\n');
  return lines.some((_, start) => wanted.every((line, offset) => lines[start + offset] === line));
}

describe('the OpenAI client example', () => {
  it('gets an answer, continues the same session with a streamed answer, then chains two Responses turns by previous_response_id', async () => {
    const server = await new App({
      name: 'custom-orchestrator',
      agents: [greeter, reverser],
      logLevel: 'silent',
    }).start(KeywordRouter, { port: 0 });
    try {
      const { code, stdout, stderr } = await runClient({ SWITCHBOARD_URL: `${server.url}/v1` });
      expect(stderr).toBe('');
      expect(code).toBe(0);
      expect(stdout).toBe('Hello! Nice to meet you.\ndesserts\ndesserts\n');
    } finally {
      await server.close();
    }
  });

  it('is what the OpenAI clients guide shows', () => {
    const guide = readFileSync(new URL('../../../docs/guides/openai-clients.md', import.meta.url), 'utf8');
    const blocks = [...guide.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1]!);
    expect(blocks.length).toBeGreaterThan(0);
    const text = readFileSync(source, 'utf8');
    for (const block of blocks) expect(isExcerptOf(block, text), block).toBe(true);
  });
});
