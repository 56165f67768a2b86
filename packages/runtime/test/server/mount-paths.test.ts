import { ConfigurationError } from '@switchboard/core';
import { describe, expect, it } from 'vitest';
import { buildApp, echoAgent } from '../support/app-fixtures.js';

/** Builds and mounts an app with the MCP or A2A route at `path`: what an operator's options do at start. */
function mountAt(protocol: 'mcp' | 'a2a', path: string) {
  const { app, orchestrator } = buildApp({ agents: [echoAgent()], [protocol]: { path } });
  return app.mount(orchestrator);
}

describe('MCP and A2A paths', () => {
  it.each(['mcp', 'a2a'] as const)(
    'refuses a %s path that is not a plain path or hides another route',
    (protocol) => {
      for (const path of ['tools', '/a b', '/v1', '/v1/tools', '/.well-known/tools']) {
        expect(() => mountAt(protocol, path), path).toThrow(ConfigurationError);
        expect(() => mountAt(protocol, path), path).toThrow(new RegExp(`${protocol}\\.path`));
      }
    },
  );

  it.each(['mcp', 'a2a'] as const)('serves %s at a path of its own', async (protocol) => {
    const app = mountAt(protocol, '/interop/endpoint');
    // The route is there: a bare GET is answered by it (not 404), whatever it says to a GET.
    expect((await app.request('/interop/endpoint')).status).not.toBe(404);
    expect((await app.request('/mcp')).status).toBe(404);
    await app.close();
  });
});
