import { describe, expect, it } from 'vitest';
import { tenantSessions } from '../../src/stores/tenant-sessions.js';
import { createApp, sleep, visitCounterAgent } from '../support/app-fixtures.js';

describe('a tenant with an idle time of its own', () => {
  it('loses its idle sessions and their session memory after its time, while other tenants keep theirs', async () => {
    const { app } = createApp({
      agents: [visitCounterAgent('counter', 'session')],
      tenantSessionIdleTtlSeconds: { brief: 1 },
    });
    try {
      for (const tenantId of ['brief', 'patient']) {
        await app.chat({ message: 'counter: go', sessionId: 's1', tenantId });
        expect((await app.chat({ message: 'counter: go', sessionId: 's1', tenantId })).reply).toContain(
          'visit 2',
        );
      }
      await sleep(1_300);
      expect(await tenantSessions(app.sessions, 'brief').exists('s1')).toBe(false);
      expect(await tenantSessions(app.sessions, 'patient').exists('s1')).toBe(true);
      // The brief tenant starts over, session memory included; the patient one goes on.
      expect(
        (await app.chat({ message: 'counter: go', sessionId: 's1', tenantId: 'brief' })).reply,
      ).toContain('visit 1');
      expect(
        (await app.chat({ message: 'counter: go', sessionId: 's1', tenantId: 'patient' })).reply,
      ).toContain('visit 3');
    } finally {
      await app.close();
    }
  });
});
