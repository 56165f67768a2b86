import { type ChildProcess, spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { cli, workFolder } from './cli-support.js';

const BIN = fileURLToPath(new URL('../bin/switchboard.js', import.meta.url));

/** Resolves with the URL of the `nth` "listening on" line the process prints. */
function listening(child: ChildProcess, output: { text: string }, nth: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const check = () => {
      const urls = [...output.text.matchAll(/listening on (http:\/\/[0-9.:]+)/g)].map(
        (match) => match[1] as string,
      );
      if (urls.length >= nth) {
        child.stdout?.off('data', check);
        resolve(urls[nth - 1] as string);
      }
    };
    child.stdout?.on('data', check);
    child.once('exit', (code) => reject(new Error(`switchboard dev exited (${code}): ${output.text}`)));
    check();
  });
}

const ask = async (url: string, message: string) =>
  (
    (await (
      await fetch(`${url}/v1/chat`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ message }),
      })
    ).json()) as { reply: string }
  ).reply;

describe('switchboard dev', async () => {
  const folder = await workFolder('dev-command');
  await cli(folder, 'init', 'app');
  const project = join(folder, 'app');
  const output = { text: '' };
  const child = spawn(process.execPath, [BIN, 'dev', 'src/app.ts', '--port', '0'], { cwd: project });
  child.stdout.on('data', (chunk: Buffer) => {
    output.text += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    output.text += chunk.toString();
  });
  afterAll(() => {
    child.kill('SIGTERM');
  });

  it('serves the app with the console, and restarts it when a file it imports changes', async () => {
    const first = await listening(child, output, 1);
    expect(await ask(first, 'hello')).toMatch(/^I can help with: /);
    const page = await fetch(`${first}/`);
    expect([page.status, (await page.text()).slice(0, 15)]).toEqual([200, '<!doctype html>']);
    const router = join(project, 'src/router.ts');
    await writeFile(router, (await readFile(router, 'utf8')).replace('I can help with', 'Ask me about'));
    const second = await listening(child, output, 2);
    expect(await ask(second, 'hello')).toMatch(/^Ask me about: /);
    // Two starts of a process that loads the workspace's TypeScript sources: slow on a loaded machine.
  }, 60_000);
});
