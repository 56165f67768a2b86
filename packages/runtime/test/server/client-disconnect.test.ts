import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { ServerHandle } from '../../src/app.js';
import { captureLogs } from '../../src/testing/log-capture.js';
import { buildApp, echoAgent, sleep } from '../support/app-fixtures.js';

/** Sends the head of a POST and part of its body, then drops the connection once the server has read them. */
async function dropMidBody(url: string, path: string): Promise<void> {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  socket.write(
    `POST ${path} HTTP/1.1\r\nhost: ${hostname}:${port}\r\ncontent-type: application/json\r\n` +
      'accept: application/json, text/event-stream\r\na2a-version: 1.0\r\ncontent-length: 1000\r\n\r\n{"message":',
  );
  await sleep(50);
  socket.destroy();
}

describe('a client that drops its connection while sending the body', () => {
  let server: ServerHandle | undefined;
  afterEach(() => server?.close());

  it.each(['/v1/chat', '/v1/chat/completions', '/a2a', '/mcp'])(
    'on %s is one request line at info (499), and no error line',
    async (path) => {
      const logs = captureLogs();
      const { app, orchestrator } = buildApp({
        agents: [echoAgent()],
        logger: logs.logger,
        a2a: true,
        mcp: true,
      });
      server = await app.start(orchestrator, { port: 0 });
      await dropMidBody(server.url, path);

      let lines = logs.withMessage('request completed');
      for (let waited = 0; lines.length === 0 && waited < 2_000; waited += 20) {
        await sleep(20);
        lines = logs.withMessage('request completed');
      }
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatchObject({ level: 30, route: path, status: 499 });
      expect(logs.records().filter((record) => record.level >= 50)).toEqual([]);
      expect(logs.withMessage('unexpected error')).toEqual([]);
    },
  );
});
