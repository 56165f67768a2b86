import { ConfigurationError } from '@switchboard/core';
import { describe, expect, it } from 'vitest';
import { readConfig } from '../src/config.js';
import { useServerApps } from './support/server-apps.js';

const serve = useServerApps();

describe('the demo server’s API reference page', () => {
  it('is on by default at /docs', async () => {
    const page = await serve({}).app.request('/docs');
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('docs/swagger-ui-bundle.js');
  });

  it('is off with DOCS=off', async () => {
    expect((await serve({ DOCS: 'off' }).app.request('/docs')).status).toBe(404);
  });

  it('refuses a DOCS value it does not know', () => {
    expect(() => readConfig({ DOCS: 'maybe' })).toThrow(ConfigurationError);
    expect(() => readConfig({ DOCS: 'maybe' })).toThrow(/DOCS must be on or off/);
  });
});
