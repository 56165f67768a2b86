import { PendingApprovalsLimitError, type UserMessage } from '@switchboard/core';
import { describe, expect, it } from 'vitest';
import { InMemorySessionStore } from '../../src/stores/in-memory-session-store.js';
import { tenantSessions } from '../../src/stores/tenant-sessions.js';
import { runningTurn, turnRecord, userMessage } from './session-store.contract.js';

/** Opens and finishes one turn in `sessionId` of `tenant`'s view, as a turn without a lease would. */
function chat(store: InMemorySessionStore, tenant: string, sessionId: string): void {
  const sessions = tenantSessions(store, tenant);
  const asked = userMessage(`hello ${sessionId}`) as UserMessage;
  sessions.openTurn(sessionId, asked, { turn: runningTurn(asked.id), limit: 1 });
  sessions.append(sessionId, [], { turn: turnRecord(asked.id) });
}

/** Opens a turn in `sessionId` of `tenant`'s view that then waits for an approval. */
function pause(store: InMemorySessionStore, tenant: string, sessionId: string): void {
  const sessions = tenantSessions(store, tenant);
  const asked = userMessage(`refund ${sessionId}`) as UserMessage;
  sessions.openTurn(sessionId, asked, { turn: runningTurn(asked.id), limit: 1 });
  sessions.append(sessionId, [], {
    turn: { ...runningTurn(asked.id), status: 'awaiting_approval', approvals: [] },
  });
}

const readable = (store: InMemorySessionStore, tenant: string, ids: readonly string[]) =>
  ids.filter((id) => tenantSessions(store, tenant).exists(id));

describe('InMemorySessionStore shares its cap between tenants', () => {
  it("a tenant filling the store forgets its own oldest sessions, never another tenant's", () => {
    const store = new InMemorySessionStore({ maxSessions: 10 });
    const acme = ['a1', 'a2', 'a3'];
    for (const id of acme) chat(store, 'acme', id);
    for (let index = 0; index < 100; index += 1) chat(store, 'globex', `g${index}`);
    expect(readable(store, 'acme', acme)).toEqual(acme);
    // Globex keeps the rest of the cap: its most recent sessions.
    expect(readable(store, 'globex', ['g92', 'g93', 'g99'])).toEqual(['g93', 'g99']);
    expect(store.stats().sessions).toBe(10);
    store.close();
  });

  it('takes room from the tenant holding the most, whoever writes', () => {
    const store = new InMemorySessionStore({ maxSessions: 6 });
    for (const id of ['g1', 'g2', 'g3', 'g4', 'g5']) chat(store, 'globex', id);
    chat(store, 'acme', 'a1');
    // Full: acme's next session takes globex's oldest, as globex holds more than its share.
    chat(store, 'acme', 'a2');
    expect(readable(store, 'globex', ['g1', 'g2', 'g3', 'g4', 'g5'])).toEqual(['g2', 'g3', 'g4', 'g5']);
    expect(readable(store, 'acme', ['a1', 'a2'])).toEqual(['a1', 'a2']);
    store.close();
  });

  it('counts waiting sessions towards the share and refuses new turns past maxPendingApprovalsPerTenant', () => {
    const store = new InMemorySessionStore({ maxSessions: 10, maxPendingApprovalsPerTenant: 4 });
    chat(store, 'acme', 'a1');
    for (let index = 0; index < 4; index += 1) pause(store, 'globex', `p${index}`);
    expect(() => pause(store, 'globex', 'p4')).toThrow(PendingApprovalsLimitError);
    expect(() => chat(store, 'globex', 'fine')).toThrow(/4 sessions are already waiting for approval/);
    // Another tenant is not held back, and nothing of the refused turns was stored.
    chat(store, 'acme', 'a2');
    expect(readable(store, 'globex', ['p4', 'fine'])).toEqual([]);
    // Filling the rest: globex's waiting sessions stay, the finished ones go first.
    for (let index = 0; index < 20; index += 1) chat(store, 'acme', `n${index}`);
    expect(readable(store, 'globex', ['p0', 'p1', 'p2', 'p3'])).toHaveLength(4);
    expect(store.stats().sessions).toBe(10);
    // Deleting a waiting session frees its place.
    tenantSessions(store, 'globex').delete('p0');
    pause(store, 'globex', 'p5');
    store.close();
  });

  it('rejects a maxPendingApprovalsPerTenant that is not a positive whole number', () => {
    for (const maxPendingApprovalsPerTenant of [0, -1, 2.5]) {
      expect(() => new InMemorySessionStore({ maxPendingApprovalsPerTenant })).toThrow(
        /maxPendingApprovalsPerTenant/,
      );
    }
  });
});
