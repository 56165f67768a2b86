import { once } from 'node:events';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { callbackSettings } from '../../src/callbacks/callback-options.js';
import { callbackSecretKey, signCallback } from '../../src/callbacks/callback-signature.js';
import { CallbackSender, generateCallbackSecret } from '../../src/callbacks/index.js';
import { startReceiver } from './receiver.js';

// Keeps docs/guides/callbacks.md honest: both receivers it shows run against real deliveries, and its limits are the code's.
const page = readFileSync(new URL('../../../../docs/guides/callbacks.md', import.meta.url), 'utf8');
const block = (language: string) =>
  page.match(new RegExp(`\`\`\`${language}\\n([\\s\\S]*?)\`\`\``))?.[1] ?? '';

/** Writes one of the page's blocks beside this test and imports it (removed again at the end). */
async function load<T>(code: string, name: string): Promise<T> {
  const file = new URL(`./.callbacks-doc-${name}`, import.meta.url);
  files.push(file);
  writeFileSync(file, code);
  return (await import(/* @vite-ignore */ file.href)) as T;
}
const files: URL[] = [];
const secret = generateCallbackSecret();
const sender = new CallbackSender({ secret, allowedHosts: ['127.0.0.1'], retryDelayMs: 5 });
const capture = await startReceiver();
afterAll(async () => {
  await sender.close({ graceMs: 0 });
  await capture.close();
  for (const file of files) rmSync(file, { force: true });
});

describe('docs/guides/callbacks.md', () => {
  it('the receiver with verifyCallback accepts a delivery once per id, and answers 401 to a forged one', async () => {
    vi.stubEnv('SWITCHBOARD_CALLBACK_SECRET', secret);
    const code = block('ts');
    const { receiver } = await load<{ receiver: Server }>(code, 'receiver.ts');
    vi.unstubAllEnvs();
    receiver.listen(0, '127.0.0.1');
    await once(receiver, 'listening');
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    const printed: string[] = [];
    const log = vi.spyOn(console, 'log').mockImplementation((...values: unknown[]) => {
      printed.push(values.join(' '));
    });
    try {
      const message = {
        url,
        deliveryId: 'turn_a',
        event: 'turn.completed',
        body: { turnId: 'turn_a', status: 'completed' },
      };
      expect(await sender.send(message)).toMatchObject({ delivered: true, status: 204 });
      expect(await sender.send(message)).toMatchObject({ delivered: true, status: 204 });
      const forged = await fetch(url, {
        method: 'POST',
        headers: {
          'webhook-id': 'turn_b',
          'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
          'webhook-signature': 'v1,AAAA',
        },
        body: '{}',
      });
      expect(forged.status).toBe(401);
    } finally {
      log.mockRestore();
      receiver.close();
    }
    expect(printed).toEqual(['turn.completed turn_a completed']);
  });

  it('the plain Node.js check accepts what the sender signs and refuses a tampered, stale or unsigned one', async () => {
    const { verifySwitchboardCallback: verify } = await load<{
      verifySwitchboardCallback: (
        headers: Record<string, unknown>,
        body: string,
        secret: string,
        tolerance?: number,
      ) => boolean;
    }>(block('js'), 'plain.mjs');
    const url = capture.route('/plain', (response) => response.writeHead(200).end());
    await sender.send({ url, deliveryId: 'turn_plain', event: 'turn.completed', body: { answer: 'ok' } });
    const [request] = capture.received('/plain');
    const headers = request?.headers ?? {};
    const body = request?.body ?? '';
    expect(verify(headers, body, secret)).toBe(true);
    expect(verify(headers, body.replace('ok', 'no'), secret)).toBe(false);
    expect(verify(headers, body, generateCallbackSecret())).toBe(false);
    expect(verify({ ...headers, 'webhook-signature': undefined }, body, secret)).toBe(false);
    const old = Math.floor(Date.now() / 1000) - 301;
    const replayed = {
      ...headers,
      'webhook-timestamp': String(old),
      'webhook-signature': signCallback([callbackSecretKey(secret)], 'turn_plain', old, body),
    };
    expect(verify(replayed, body, secret)).toBe(false);
    expect(verify(replayed, body, secret, 400)).toBe(true);
  });

  it('states the limits the code has', () => {
    const defaults = callbackSettings({ secret }) as unknown as Record<string, unknown>;
    const rows = [...page.matchAll(/^\| [^|]+ \| (\d+) \| `(\w+)` \|$/gm)];
    expect(rows.map((row) => row[2])).toEqual([
      'timeoutMs',
      'maxAttempts',
      'retryDelayMs',
      'maxRetryDelayMs',
      'maxResponseBytes',
      'maxBodyBytes',
      'concurrency',
      'maxPending',
    ]);
    for (const [, value, option = ''] of rows) expect(defaults[option], option).toBe(Number(value));
  });
});
