import { ConfigurationError } from '@switchboard/core';
import { describe, expect, it } from 'vitest';
import { callbackSecretKey, signCallback } from '../../src/callbacks/callback-signature.js';
import { CallbackSender, generateCallbackSecret, verifyCallback } from '../../src/callbacks/index.js';

// The Standard Webhooks specification's published example: a receiver using any of its libraries verifies ours.
const SPEC = {
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
  timestamp: 1614265330,
  body: '{"test": 2432232314}',
  signature: 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
};

const secret = generateCallbackSecret();
const now = 1_800_000_000_000;
const signed = (body: string, key = secret, timestamp = now / 1000, id = 'turn_1') => ({
  'webhook-id': id,
  'webhook-timestamp': String(timestamp),
  'webhook-signature': signCallback([callbackSecretKey(key)], id, timestamp, body),
});

describe('callback signatures', () => {
  it('match the specification’s example byte for byte, and verify under it', () => {
    expect(signCallback([callbackSecretKey(SPEC.secret)], SPEC.id, SPEC.timestamp, SPEC.body)).toBe(
      SPEC.signature,
    );
    const headers = {
      'webhook-id': SPEC.id,
      'webhook-timestamp': String(SPEC.timestamp),
      'webhook-signature': SPEC.signature,
    };
    expect(
      verifyCallback({ headers, body: SPEC.body, secret: SPEC.secret, now: SPEC.timestamp * 1000 }),
    ).toEqual({
      valid: true,
      id: SPEC.id,
      timestamp: SPEC.timestamp,
    });
  });

  it('a tampered body, another secret, an old or future timestamp, or missing headers fail, each with its reason', () => {
    const body = '{"type":"turn.completed","data":{"answer":"42"}}';
    const headers = signed(body);
    expect(verifyCallback({ headers, body, secret, now }).valid).toBe(true);
    expect(verifyCallback({ headers, body: body.replace('42', '43'), secret, now })).toEqual({
      valid: false,
      reason: 'bad_signature',
    });
    expect(verifyCallback({ headers, body, secret: generateCallbackSecret(), now })).toEqual({
      valid: false,
      reason: 'bad_signature',
    });
    expect(verifyCallback({ headers: { ...headers, 'webhook-id': 'turn_2' }, body, secret, now })).toEqual({
      valid: false,
      reason: 'bad_signature',
    });
    expect(verifyCallback({ headers, body, secret, now: now + 301_000 })).toEqual({
      valid: false,
      reason: 'stale_timestamp',
    });
    expect(verifyCallback({ headers, body, secret, now: now - 301_000 })).toEqual({
      valid: false,
      reason: 'stale_timestamp',
    });
    expect(verifyCallback({ headers, body, secret, now: now + 299_000 }).valid).toBe(true);
    expect(verifyCallback({ headers, body, secret, now: now + 61_000, toleranceSeconds: 60 })).toEqual({
      valid: false,
      reason: 'stale_timestamp',
    });
    expect(
      verifyCallback({ headers: { ...headers, 'webhook-timestamp': '1e9' }, body, secret, now }),
    ).toEqual({ valid: false, reason: 'invalid_timestamp' });
    const { 'webhook-signature': _, ...unsigned } = headers;
    expect(verifyCallback({ headers: unsigned, body, secret, now })).toEqual({
      valid: false,
      reason: 'missing_headers',
    });
    expect(
      verifyCallback({ headers: { ...headers, 'webhook-signature': 'v1,' }, body, secret, now }),
    ).toEqual({ valid: false, reason: 'bad_signature' });
  });

  it('reads fetch Headers and any header case, and accepts any one of several signatures (rotation)', () => {
    const body = '{}';
    const old = generateCallbackSecret();
    const both = signCallback(
      [callbackSecretKey(secret), callbackSecretKey(old)],
      'turn_1',
      now / 1000,
      body,
    );
    const headers = new Headers({
      'Webhook-Id': 'turn_1',
      'Webhook-Timestamp': String(now / 1000),
      'Webhook-Signature': both,
    });
    expect(verifyCallback({ headers, body, secret: old, now }).valid).toBe(true);
    expect(verifyCallback({ headers, body, secret, now }).valid).toBe(true);
    const upper = {
      'Webhook-Id': 'turn_1',
      'Webhook-Timestamp': String(now / 1000),
      'Webhook-Signature': both,
    };
    expect(
      verifyCallback({
        headers: upper,
        body: Buffer.from(body),
        secret: [generateCallbackSecret(), old],
        now,
      }).valid,
    ).toBe(true);
  });

  it('refuses a secret that is not whsec_ and 24 to 64 random bytes, when the sender is built', () => {
    for (const bad of [
      '',
      'hunter2',
      'whsec_',
      'whsec_c2hvcnQ=',
      `whsec_${Buffer.alloc(65).toString('base64')}`,
      'whsec_!!!!',
    ])
      expect(() => new CallbackSender({ secret: bad }), bad).toThrow(ConfigurationError);
    expect(() => new CallbackSender({ secret: [] })).toThrow(/need a secret/);
    expect(generateCallbackSecret()).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(() => new CallbackSender({ secret: generateCallbackSecret() })).not.toThrow();
  });
});
