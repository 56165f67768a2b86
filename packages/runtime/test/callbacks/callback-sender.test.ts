import { once } from 'node:events';
import { createServer } from 'node:net';
import { ValidationError } from '@switchboard/core';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  type CallbackAttempt,
  CallbackRefusedError,
  CallbackSender,
  type CallbackSenderOptions,
  generateCallbackSecret,
  verifyCallback,
} from '../../src/callbacks/index.js';
import { startReceiver } from './receiver.js';

const receiver = await startReceiver();
afterAll(() => receiver.close());

const secret = generateCallbackSecret();
const senders: CallbackSender[] = [];
afterEach(async () => {
  await Promise.all(senders.splice(0).map((sender) => sender.close({ graceMs: 0 })));
});

/** A sender allowed to reach the loopback receiver, with short waits; `attempts` collects what it reports. */
function sender(options: Partial<CallbackSenderOptions> = {}) {
  const attempts: CallbackAttempt[] = [];
  const created = new CallbackSender({
    secret,
    allowedHosts: ['127.0.0.1'],
    retryDelayMs: 5,
    maxRetryDelayMs: 40,
    onAttempt: (attempt) => attempts.push(attempt),
    ...options,
  });
  senders.push(created);
  return { sender: created, attempts };
}

const message = (url: string, deliveryId = 'turn_1') => ({
  url,
  deliveryId,
  event: 'turn.completed',
  body: { sessionId: 's1', turnId: deliveryId, status: 'completed', answer: 'Forty-two.' },
});

/** Resolves once `condition` holds, checking every few milliseconds. */
async function until(condition: () => boolean) {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
}

describe('CallbackSender', () => {
  it('POSTs the event as signed JSON that the receiver verifies with verifyCallback', async () => {
    const url = receiver.route('/signed', (response) => response.writeHead(204).end());
    const { sender: callbacks, attempts } = sender();
    const result = await callbacks.send(message(url));
    expect(result).toEqual({
      deliveryId: 'turn_1',
      delivered: true,
      attempts: 1,
      outcome: 'delivered',
      status: 204,
    });
    const [request] = receiver.received('/signed');
    expect(request?.headers['content-type']).toBe('application/json');
    expect(request?.headers['webhook-id']).toBe('turn_1');
    const check = verifyCallback({ headers: request?.headers ?? {}, body: request?.body ?? '', secret });
    expect(check).toEqual({
      valid: true,
      id: 'turn_1',
      timestamp: Number(request?.headers['webhook-timestamp']),
    });
    const payload = JSON.parse(request?.body ?? '');
    expect(payload).toEqual({
      type: 'turn.completed',
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      data: { sessionId: 's1', turnId: 'turn_1', status: 'completed', answer: 'Forty-two.' },
    });
    // What logs and metrics get: no URL, body, answer or secret.
    expect(attempts).toEqual([
      {
        deliveryId: 'turn_1',
        event: 'turn.completed',
        attempt: 1,
        outcome: 'delivered',
        status: 204,
        responseBytes: 0,
      },
    ]);
    expect(callbacks.stats()).toMatchObject({ sending: 0, pending: 0, delivered: 1, failed: 0 });
  });

  it('retries a 500 with growing waits, the same delivery id and body each time, until a 2xx', async () => {
    const url = receiver.route('/flaky', (response, index) =>
      response.writeHead(index < 3 ? 500 : 200).end(index < 3 ? 'internal details of the receiver' : 'ok'),
    );
    const { sender: callbacks, attempts } = sender({ random: () => 1 });
    const result = await callbacks.send(message(url, 'turn_flaky'));
    expect(result).toMatchObject({ delivered: true, attempts: 4, status: 200 });
    const requests = receiver.received('/flaky');
    expect(requests).toHaveLength(4);
    expect(new Set(requests.map((request) => request.headers['webhook-id']))).toEqual(
      new Set(['turn_flaky']),
    );
    expect(new Set(requests.map((request) => request.body)).size).toBe(1);
    for (const request of requests)
      expect(verifyCallback({ headers: request.headers, body: request.body, secret }).valid).toBe(true);
    expect(attempts.map((attempt) => [attempt.outcome, attempt.status, attempt.retryInMs])).toEqual([
      ['retryable_status', 500, 5],
      ['retryable_status', 500, 10],
      ['retryable_status', 500, 20],
      ['delivered', 200, undefined],
    ]);
  });

  it('gives up after maxAttempts, waits with jitter between half and all of each step, and honours Retry-After', async () => {
    const url = receiver.route('/down', (response) => response.writeHead(503).end());
    const { sender: callbacks, attempts } = sender({ maxAttempts: 3, random: () => 0, retryDelayMs: 8 });
    expect(await callbacks.send(message(url))).toMatchObject({
      delivered: false,
      attempts: 3,
      outcome: 'retryable_status',
      status: 503,
    });
    expect(attempts.map((attempt) => attempt.retryInMs)).toEqual([4, 8, undefined]);
    const busy = receiver.route('/busy', (response, index) =>
      index === 0 ? response.writeHead(429, { 'retry-after': '0' }).end() : response.writeHead(200).end(),
    );
    const { sender: second, attempts: secondAttempts } = sender({
      retryDelayMs: 30_000,
      maxRetryDelayMs: 30_000,
    });
    expect(await second.send(message(busy))).toMatchObject({ delivered: true, attempts: 2 });
    expect(secondAttempts[0]).toMatchObject({ outcome: 'retryable_status', status: 429, retryInMs: 0 });
  });

  it('does not retry a 400, and does not follow a redirect', async () => {
    const url = receiver.route('/refuses', (response) => response.writeHead(400).end('bad'));
    const target = receiver.route('/redirect-target', (response) => response.writeHead(200).end());
    const redirect = receiver.route('/redirects', (response) =>
      response.writeHead(302, { location: target }).end(),
    );
    const { sender: callbacks } = sender({
      onAttempt: () => {
        throw new Error('a broken listener changes nothing');
      },
    });
    expect(await callbacks.send(message(url))).toEqual({
      deliveryId: 'turn_1',
      delivered: false,
      attempts: 1,
      outcome: 'rejected_status',
      status: 400,
    });
    expect(receiver.received('/refuses')).toHaveLength(1);
    expect(await callbacks.send(message(redirect))).toMatchObject({
      delivered: false,
      attempts: 1,
      status: 302,
    });
    expect(receiver.received('/redirect-target')).toHaveLength(0);
    expect(callbacks.stats()).toMatchObject({ delivered: 0, failed: 2 });
  });

  it('times out on a receiver that never answers, and retries it', async () => {
    const url = receiver.route('/silent', () => {});
    const { sender: callbacks, attempts } = sender({ timeoutMs: 100, maxAttempts: 2 });
    expect(await callbacks.send(message(url))).toMatchObject({
      delivered: false,
      attempts: 2,
      outcome: 'timeout',
    });
    expect(receiver.received('/silent')).toHaveLength(2);
    expect(attempts.map((attempt) => attempt.outcome)).toEqual(['timeout', 'timeout']);
    await until(() => receiver.open('/silent').now === 0);
  });

  it('a connection refused is a network error, retried', async () => {
    const closed = createServer().listen(0, '127.0.0.1');
    await once(closed, 'listening');
    const { port } = closed.address() as { port: number };
    closed.close();
    await once(closed, 'close');
    const { sender: callbacks, attempts } = sender({ maxAttempts: 2 });
    expect(await callbacks.send(message(`http://127.0.0.1:${port}/`))).toMatchObject({
      delivered: false,
      attempts: 2,
      outcome: 'network_error',
    });
    expect(attempts.map((attempt) => attempt.status)).toEqual([undefined, undefined]);
  });

  it('reads at most maxResponseBytes of a 10 MB answer, then closes the connection', async () => {
    let finished = false;
    const url = receiver.route('/huge', (response) => {
      response.writeHead(200, { 'content-type': 'text/plain' });
      const chunk = Buffer.alloc(64 * 1024, 'x');
      let sent = 0;
      const write = () => {
        while (sent < 10 * 1024 * 1024) {
          sent += chunk.length;
          if (!response.write(chunk)) return void response.once('drain', write);
        }
        response.end(() => {
          finished = true;
        });
      };
      write();
    });
    const { sender: callbacks, attempts } = sender({ maxResponseBytes: 16 * 1024 });
    expect(await callbacks.send(message(url))).toMatchObject({ delivered: true, attempts: 1 });
    const read = attempts[0]?.responseBytes ?? Number.POSITIVE_INFINITY;
    expect(read).toBeGreaterThanOrEqual(16 * 1024);
    // Bytes, not time: one network read past the cap at most, nowhere near the 10 MB sent.
    expect(read).toBeLessThanOrEqual(16 * 1024 + 64 * 1024);
    await until(() => receiver.open('/huge').now === 0);
    expect(finished).toBe(false);
  });

  it('sends at most `concurrency` at once, holds at most maxPending, and refuses one more with queue_full', async () => {
    const held: (() => void)[] = [];
    const url = receiver.route('/held', (response) => held.push(() => response.writeHead(200).end()));
    const { sender: callbacks } = sender({ concurrency: 2, maxPending: 4 });
    const results = [1, 2, 3, 4].map((index) => callbacks.send(message(url, `turn_${index}`)));
    await until(() => held.length === 2);
    expect(callbacks.stats()).toMatchObject({ sending: 2, pending: 4 });
    let refused: unknown;
    try {
      void callbacks.send(message(url, 'turn_5'));
    } catch (error) {
      refused = error;
    }
    expect(CallbackRefusedError.isInstance(refused)).toBe(true);
    expect((refused as CallbackRefusedError).reason).toBe('queue_full');
    expect(callbacks.stats().refused).toBe(1);
    while (
      (await Promise.race([
        Promise.all(results),
        new Promise((resolve) => setTimeout(resolve, 5, 'waiting')),
      ])) === 'waiting'
    )
      for (const release of held.splice(0)) release();
    expect(receiver.open('/held').most).toBe(2);
    // Two connections at a time arrive in either order; the queued two only after the first two.
    const ids = receiver.received('/held').map((request) => String(request.headers['webhook-id']));
    expect([ids.slice(0, 2).sort(), ids.slice(2).sort()]).toEqual([
      ['turn_1', 'turn_2'],
      ['turn_3', 'turn_4'],
    ]);
    expect(callbacks.stats()).toMatchObject({ pending: 0, delivered: 4, refused: 1 });
    const later = callbacks.send(message(url, 'turn_6'));
    await until(() => held.length === 1);
    for (const release of held.splice(0)) release();
    expect((await later).delivered).toBe(true);
  });

  it('refuses, before anything is sent, a body over maxBodyBytes, a bad id or event, and a URL outside its policy', async () => {
    const url = receiver.route('/never', (response) => response.writeHead(200).end());
    const { sender: callbacks } = sender({ maxBodyBytes: 200 });
    expect(() => callbacks.send({ ...message(url), body: { answer: 'x'.repeat(200) } })).toThrow(
      /larger than 200 bytes \(maxBodyBytes\)/,
    );
    const invalid = (change: object) => {
      try {
        void callbacks.send({ ...message(url), ...change });
      } catch (error) {
        expect(ValidationError.isInstance(error)).toBe(true);
        return (error as ValidationError).issues[0];
      }
      return 'accepted';
    };
    expect(invalid({ deliveryId: 'has space' })).toMatch(/^deliveryId:/);
    expect(invalid({ deliveryId: 'x'.repeat(129) })).toMatch(/^deliveryId:/);
    expect(invalid({ event: '' })).toMatch(/^event:/);
    expect(invalid({ body: { size: 1n } })).toBe('body: not JSON-serialisable');
    expect(invalid({ url: 'https://hooks.example.com/' })).toBe(
      'callbackUrl: this host is not among the allowed callback hosts',
    );
    expect(invalid({ url: url.replace('http:', 'ftp:') })).toBe(
      'callbackUrl: only http and https URLs are accepted',
    );
    expect(receiver.received('/never')).toHaveLength(0);
    expect(callbacks.stats()).toMatchObject({ pending: 0, refused: 1 });
  });

  it('close() lets deliveries under way finish within its grace period', async () => {
    const url = receiver.route('/slow', (response) => setTimeout(() => response.writeHead(200).end(), 50));
    const { sender: callbacks } = sender();
    const result = callbacks.send(message(url));
    await until(() => receiver.received('/slow').length === 1);
    expect(await callbacks.close({ graceMs: 10_000 })).toEqual({ abandoned: 0 });
    expect((await result).delivered).toBe(true);
    expect(() => callbacks.send(message(url))).toThrow(/callback sender is closed/);
  });

  it('close() abandons, with a count, what its grace period did not see finish: under way, queued or waiting to retry', async () => {
    const silent = receiver.route('/silent-at-close', () => {});
    const failing = receiver.route('/failing-at-close', (response) => response.writeHead(500).end());
    const { sender: callbacks } = sender({ concurrency: 1, retryDelayMs: 60_000, maxRetryDelayMs: 60_000 });
    const retrying = callbacks.send(message(failing, 'turn_retrying'));
    await until(() => callbacks.stats().sending === 0 && receiver.received('/failing-at-close').length === 1);
    const underWay = callbacks.send(message(silent, 'turn_under_way'));
    const queued = callbacks.send(message(silent, 'turn_queued'));
    await until(() => receiver.received('/silent-at-close').length === 1);
    expect(await callbacks.close({ graceMs: 30 })).toEqual({ abandoned: 3 });
    for (const result of await Promise.all([retrying, underWay, queued]))
      expect(result).toMatchObject({ delivered: false, outcome: 'abandoned' });
    expect((await retrying).attempts).toBe(1);
    expect((await queued).attempts).toBe(0);
    expect(callbacks.stats()).toMatchObject({ pending: 0, sending: 0, abandoned: 3 });
    await until(() => receiver.open('/silent-at-close').now === 0);
  });

  it('without an allow-list, resolves the host before each attempt and never connects to a name that points inside', async () => {
    const fetched: string[] = [];
    const resolved: string[] = [];
    const addresses: Record<string, string[]> = {
      'internal.example.com': ['93.184.216.34', '10.0.0.7'],
      'public.example.com': ['93.184.216.34', '2606:2800:220:1::1'],
    };
    const { sender: callbacks, attempts } = sender({
      allowedHosts: undefined,
      maxAttempts: 2,
      lookup: async (hostname) => {
        resolved.push(hostname);
        const found = addresses[hostname];
        if (!found)
          throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
        return found.map((address) => ({ address }));
      },
      fetch: async (input) => {
        fetched.push(String(input));
        return new Response(null, { status: 204 });
      },
    });
    expect(await callbacks.send(message('https://internal.example.com/hook'))).toMatchObject({
      delivered: false,
      attempts: 1,
      outcome: 'blocked_address',
    });
    expect(await callbacks.send(message('https://public.example.com/hook'))).toMatchObject({
      delivered: true,
      attempts: 1,
    });
    expect(await callbacks.send(message('https://gone.example.com/hook'))).toMatchObject({
      delivered: false,
      attempts: 2,
      outcome: 'network_error',
    });
    expect(fetched).toEqual(['https://public.example.com/hook']);
    expect(resolved).toEqual([
      'internal.example.com',
      'public.example.com',
      'gone.example.com',
      'gone.example.com',
    ]);
    expect(attempts.map((attempt) => attempt.outcome)).toEqual([
      'blocked_address',
      'delivered',
      'network_error',
      'network_error',
    ]);
  });

  it('a clock that throws while sending ends the delivery as a network error instead of leaving it pending', async () => {
    const url = receiver.route('/clock', (response) => response.writeHead(200).end());
    let calls = 0;
    const { sender: callbacks } = sender({
      maxAttempts: 2,
      now: () => {
        calls += 1;
        if (calls > 1) throw new Error('clock broken');
        return Date.now();
      },
    });
    expect(await callbacks.send(message(url))).toMatchObject({
      delivered: false,
      attempts: 2,
      outcome: 'network_error',
    });
    expect(callbacks.stats()).toMatchObject({ pending: 0, sending: 0, failed: 1 });
    expect(receiver.received('/clock')).toHaveLength(0);
  });
});
