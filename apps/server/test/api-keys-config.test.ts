import { createHash } from 'node:crypto';
import { apiKeys } from '@switchboard/runtime';
import { describe, expect, it } from 'vitest';
import { readConfig } from '../src/config.js';

const KEY = 'sk-env-0123456789abcdef0123456789';
const digest = createHash('sha256').update(KEY).digest('hex');
const request = (key: string) =>
  new Request('http://localhost/v1/chat', { headers: { authorization: `Bearer ${key}` } });

describe('SWITCHBOARD_API_KEYS', () => {
  it('takes keys as sha256 digests, with scopes and an expiry, as apiKeys() does', async () => {
    const config = readConfig({
      SWITCHBOARD_API_KEYS: JSON.stringify({
        [`sha256:${digest}`]: {
          tenantId: 'acme',
          userId: 'alice',
          scopes: ['chat', 'sessions:read'],
          expiresAt: '2999-01-01T00:00:00Z',
        },
      }),
    });
    const auth = apiKeys({ keys: config.SWITCHBOARD_API_KEYS ?? {} });
    expect(await auth.authenticate(request(KEY))).toEqual({
      tenantId: 'acme',
      keyName: 'acme',
      userId: 'alice',
      scopes: ['chat', 'sessions:read'],
    });
  });

  it('refuses an unknown scope, a malformed digest and an expiry that is not a date', () => {
    const read =
      (owner: Record<string, unknown>, key = KEY) =>
      () =>
        readConfig({ SWITCHBOARD_API_KEYS: JSON.stringify({ [key]: { tenantId: 'acme', ...owner } }) });
    expect(read({ scopes: ['everything'] })).toThrow(/scopes/);
    expect(read({}, 'sha256:not-hex-at-all-not-hex-at-all')).toThrow(/SWITCHBOARD_API_KEYS/);
    expect(read({ expiresAt: 'next tuesday' })).toThrow(/expiresAt/);
    // The error names where the problem is, never the key itself: it goes to logs.
    for (const [owner, key] of [
      [{ scopes: ['everything'] }, KEY],
      [{}, 'sha256:not-hex-at-all-not-hex-at-all'],
      [{ tenantId: '' }, KEY],
    ] as const) {
      expect(read(owner, key)).toThrow(/SWITCHBOARD_API_KEYS\.<key>/);
      expect(read(owner, key)).not.toThrow(key);
    }
  });
});
