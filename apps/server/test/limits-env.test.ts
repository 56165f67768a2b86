import { ConfigurationError } from '@switchboard/core';
import { describe, expect, it } from 'vitest';
import { readConfig } from '../src/config.js';
import { useServerApps } from './support/server-apps.js';

const serve = useServerApps();
const KEY = 'sk-acme-0123456789abcdef0123456789abcdef';
const KEYS = JSON.stringify({ [KEY]: { tenantId: 'acme', name: 'acme-web' } });

describe('the demo server’s limits from the environment', () => {
  it('throttles failed authentication after FAILED_AUTH_PER_MINUTE and the public routes after PUBLIC_REQUESTS_PER_MINUTE', async () => {
    const { app } = serve({
      CONSOLE: 'off',
      SWITCHBOARD_API_KEYS: KEYS,
      FAILED_AUTH_PER_MINUTE: '2',
      PUBLIC_REQUESTS_PER_MINUTE: '3',
    });
    const wrong = { headers: { authorization: `Bearer ${KEY}-wrong` } };
    const failures: number[] = [];
    for (let attempt = 0; attempt < 3; attempt += 1)
      failures.push((await app.request('/v1/agents', wrong)).status);
    expect(failures).toEqual([401, 401, 429]);
    const health: number[] = [];
    for (let attempt = 0; attempt < 4; attempt += 1) health.push((await app.request('/healthz')).status);
    expect(health).toEqual([200, 200, 200, 429]);
  });

  it('reads MAX_SESSIONS and MAX_PENDING_APPROVALS_PER_TENANT', async () => {
    const config = readConfig({ MAX_SESSIONS: '50', MAX_PENDING_APPROVALS_PER_TENANT: '7' });
    expect(config).toMatchObject({ MAX_SESSIONS: 50, MAX_PENDING_APPROVALS_PER_TENANT: 7 });
  });

  it('reads TRUSTED_PROXIES as a list, and refuses one that is neither an address nor a range', () => {
    expect(readConfig({ TRUSTED_PROXIES: '10.0.0.0/8, ::1' }).TRUSTED_PROXIES).toEqual(['10.0.0.0/8', '::1']);
    expect(() => serve({ CONSOLE: 'off', TRUSTED_PROXIES: 'proxy.internal' })).toThrow(ConfigurationError);
    expect(() => readConfig({ FAILED_AUTH_PER_MINUTE: '0' })).toThrow(/FAILED_AUTH_PER_MINUTE/);
  });
});
