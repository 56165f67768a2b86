import { describe, expect, it } from 'vitest';
import { AgentAbort } from '../../src/engine/agent-abort.js';
import { LeaseRenewer } from '../../src/engine/lease-renewer.js';
import { TurnControl } from '../../src/engine/turn-control.js';
import type { SessionLease } from '../../src/stores/session-store.js';

const aborted = (abort: AgentAbort) => abort.signal.aborted;

describe("a turn's stop button", () => {
  it('aborts every call of a fan-out still running when the turn stops, and none that ended', () => {
    const control = new TurnControl('s1', new AbortController().signal);
    const [first, second, third, fourth] = [
      new AgentAbort(),
      new AgentAbort(),
      new AgentAbort(),
      new AgentAbort(),
    ];
    for (const call of [first, second, third]) control.track(call);
    control.untrack(first);
    control.untrack(third);
    control.track(fourth);
    control.stop(new Error('cancelled'));
    expect([first, second, third, fourth].map(aborted)).toEqual([false, true, false, true]);
  });

  it('aborts at once a call tracked after the turn stopped', () => {
    const control = new TurnControl('s1', new AbortController().signal);
    control.stop(new Error('cancelled'));
    const late = new AgentAbort();
    control.track(late);
    expect(aborted(late)).toBe(true);
  });
});

describe('the lease renewer', () => {
  const lease = (sessionId: string, renew: () => boolean): SessionLease =>
    ({ sessionId, ttlMs: 30_000, token: sessionId, renew, release: () => {} }) as unknown as SessionLease;

  it('finds the turn of each held session to stop, whatever order the others were let go in', () => {
    const renewer = new LeaseRenewer(60_000);
    const controls = ['a', 'b', 'c', 'd'].map((id) => new TurnControl(id, new AbortController().signal));
    const held = controls.map((control) =>
      renewer.add(
        lease(control.sessionId, () => true),
        control,
      ),
    );
    expect(renewer.delete(held[0]!)).toBe(true);
    expect(renewer.delete(held[0]!)).toBe(false);
    renewer.delete(held[2]!);
    expect(renewer.size).toBe(2);
    expect(renewer.stop('c', undefined, () => new Error('gone'))).toBe(false);
    expect(renewer.stop('d', undefined, () => new Error('cancelled'))).toBe(true);
    expect(renewer.stop('b', undefined, () => new Error('cancelled'))).toBe(true);
    expect(controls.map((control) => control.stopped !== undefined)).toEqual([false, true, false, true]);
  });
});
