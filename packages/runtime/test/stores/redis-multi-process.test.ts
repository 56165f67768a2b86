import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { RedisMemoryStore } from '../../src/redis.js';
import { REDIS_URL, useRedis } from '../support/redis.js';

const redis = useRedis();
const worker = fileURLToPath(new URL('./fixtures/increment-worker.ts', import.meta.url));
const repositoryRoot = fileURLToPath(new URL('../../../../', import.meta.url));

/** Resolves with everything the process printed once it printed a line starting with `marker`. */
function waitForLine(child: ChildProcessWithoutNullStreams, marker: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let output = '';
    let errors = '';
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const line = output.split('\n').find((candidate) => candidate.startsWith(marker));
      if (line === undefined) return;
      child.stdout.off('data', onData);
      resolve(line);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', (chunk: Buffer) => {
      errors += chunk.toString();
    });
    child.once('exit', (code) =>
      reject(new Error(`worker exited with ${code} before '${marker}':\n${output}${errors}`)),
    );
  });
}

it('loses no update when 3 processes each run 100 concurrent increments of one key', async () => {
  const keyPrefix = redis.prefix();
  const children = Array.from({ length: 3 }, () =>
    spawn(process.execPath, ['--import', 'tsx', worker], {
      cwd: repositoryRoot,
      env: { ...process.env, REDIS_URL, KEY_PREFIX: keyPrefix, COUNT: '100' },
    }),
  );
  try {
    await Promise.all(children.map((child) => waitForLine(child, 'ready')));
    const finished = children.map((child) => waitForLine(child, 'done '));
    for (const child of children) child.stdin.write('go\n');
    const results = (await Promise.all(finished)).flatMap(
      (line) => JSON.parse(line.slice('done '.length)) as number[],
    );
    await Promise.all(children.map((child) => (child.exitCode === null ? once(child, 'exit') : undefined)));

    const memory = new RedisMemoryStore(REDIS_URL, { keyPrefix });
    expect(await memory.get('app', 'counter')).toBe(300);
    await memory.close();
    // Every increment saw a distinct value: none was applied twice or lost.
    expect(results.sort((a, b) => a - b)).toEqual(Array.from({ length: 300 }, (_, index) => index + 1));
    expect(children.map((child) => child.exitCode)).toEqual([0, 0, 0]);
  } finally {
    for (const child of children) if (child.exitCode === null) child.kill();
  }
}, 60_000);
