import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { stripVTControlCharacters } from 'node:util';
import { describe, expect, it } from 'vitest';
import { serverEnv } from './support/spawn-server.js';

const main = fileURLToPath(new URL('../src/main.ts', import.meta.url));

describe('apps/server logs in a terminal', () => {
  it('prints human-readable lines, not JSON, when stdout is a terminal', async () => {
    // util-linux `script` gives the server a pseudo-terminal as stdout, as a developer's shell does.
    const child = spawn(
      'script',
      ['-qefc', `${JSON.stringify(process.execPath)} --import tsx ${JSON.stringify(main)}`, '/dev/null'],
      { env: serverEnv({ ORCHESTRATOR: 'keyword' }), stdio: ['pipe', 'pipe', 'pipe'], detached: true },
    );
    let output = '';
    child.stdout?.on('data', (chunk) => {
      output += String(chunk);
    });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no listening line: ${output}`)), 20_000);
        child.once('exit', (code) => reject(new Error(`script exited with ${code}: ${output}`)));
        child.stdout?.on('data', () => {
          const match = /listening on (http:\/\/[\d.:]+)/.exec(stripVTControlCharacters(output));
          if (match && /Try: /.test(output)) {
            clearTimeout(timer);
            resolve(match[1] as string);
          }
        });
      });
      const response = await fetch(`${url}/v1/chat`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ message: 'hi' }),
      });
      expect(response.status).toBe(200);
      await new Promise<void>((resolve) => {
        const check = () => (/request completed/.test(output) ? resolve() : setTimeout(check, 20));
        check();
      });
    } finally {
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGTERM');
    }
    const lines = stripVTControlCharacters(output)
      .split(/\r?\n/)
      .filter((line) => line.trim() !== '');
    // No JSON line; pino-pretty's "[time] LEVEL: message" with the fields indented below.
    expect(lines.filter((line) => line.trimStart().startsWith('{"level"'))).toEqual([]);
    expect(lines.some((line) => /^\[[\d:.]+\] INFO.*: Switchboard listening on http:/.test(line))).toBe(true);
    expect(lines.some((line) => /^\[[\d:.]+\] INFO.*: request completed/.test(line))).toBe(true);
    expect(lines.some((line) => /^\s+route: "\/v1\/chat"/.test(line))).toBe(true);
  }, 40_000);
});
