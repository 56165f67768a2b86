import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { readConfig } from '../src/config.js';

const main = fileURLToPath(new URL('../src/main.ts', import.meta.url));
const root = fileURLToPath(new URL('../../../', import.meta.url));

describe('llm-routed configuration', () => {
  it('reads the OpenAI settings, with a default model', () => {
    expect(readConfig({ OPENAI_API_KEY: 'sk-test' })).toEqual({
      apiKey: 'sk-test',
      model: 'gpt-4o-mini',
      port: 3000,
      host: '127.0.0.1',
    });
    expect(
      readConfig({
        OPENAI_API_KEY: 'local',
        OPENAI_BASE_URL: 'http://127.0.0.1:11434/v1',
        OPENAI_MODEL: 'llama3.2',
        PORT: '8080',
      }),
    ).toEqual({
      apiKey: 'local',
      baseURL: 'http://127.0.0.1:11434/v1',
      model: 'llama3.2',
      port: 8080,
      host: '127.0.0.1',
    });
  });

  it('says what to set when the key is missing or a value is malformed', () => {
    expect(() => readConfig({ OPENAI_API_KEY: '' })).toThrow(/OPENAI_API_KEY is not set/);
    expect(() => readConfig({ OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: 'not a url' })).toThrow(
      /OPENAI_BASE_URL must be a URL/,
    );
  });

  it('exits with code 1 and the reason when started without a key', async () => {
    const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, PORT: '0' };
    const failure = await promisify(execFile)(process.execPath, ['--import', 'tsx', main], {
      cwd: root,
      env,
      timeout: 20_000,
    }).then(
      () => undefined,
      (error: { code?: number; stderr?: string }) => error,
    );
    expect(failure?.code).toBe(1);
    expect(failure?.stderr).toContain('OPENAI_API_KEY is not set');
  });
});
