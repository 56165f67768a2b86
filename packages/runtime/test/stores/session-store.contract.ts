import { createId, type MessageItem, SessionBusyError } from '@switchboard/core';
import { afterEach, describe, expect, it, type TestContext } from 'vitest';
import type { SessionStore, TurnRecord } from '../../src/stores/session-store.js';
import { settlesBefore } from '../support/settles-before.js';

/** Builds a store for one test; the suite closes it afterwards. */
export type SessionStoreFactory = (options: {
  idleTtlSeconds: number;
}) => SessionStore | Promise<SessionStore>;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A user message with a readable content. */
export function userMessage(content: string): MessageItem {
  return { id: createId('msg'), role: 'user', content, createdAt: new Date().toISOString() };
}

/** An agent's reply, with metadata. */
export function toolMessage(content: string): MessageItem {
  return {
    id: createId('msg'),
    role: 'tool',
    name: 'echo',
    toolCallId: createId('call'),
    content,
    status: 'ok',
    createdAt: new Date().toISOString(),
    metadata: { nested: { items: [1, 2] } },
  };
}

/** A finished single-hop turn record. */
export function turnRecord(userMessageId: string): TurnRecord {
  const now = new Date().toISOString();
  return {
    turnId: createId('turn'),
    userMessageId,
    status: 'completed',
    startedAt: now,
    endedAt: now,
    steps: [
      {
        hop: 0,
        kind: 'call',
        calls: [{ toolCallId: createId('call'), agent: 'echo', reason: 'keyword' }],
        decidedAt: now,
        durationMs: 1,
      },
    ],
  };
}

const contents = (messages: readonly MessageItem[]) => messages.map((message) => message.content);

/** Runs a store call that may throw at once or reject, as a promise (store methods may do either). */
function attempt<T>(call: () => T | Promise<T>): Promise<T> {
  return Promise.resolve().then(call);
}

/** A turn that has just started (`running`, no steps yet). */
export function runningTurn(userMessageId: string): TurnRecord {
  const now = new Date().toISOString();
  return { turnId: createId('turn'), userMessageId, status: 'running', startedAt: now, steps: [] };
}

/** A user message as `openTurn` takes it. */
function question(content: string) {
  return userMessage(content) as Extract<MessageItem, { role: 'user' }>;
}

/** A store may copy or freeze what it keeps: a mutation either throws or changes nothing stored. */
function attemptMutation(mutate: () => void): void {
  try {
    mutate();
  } catch (error) {
    expect(error).toBeInstanceOf(TypeError);
  }
}

/**
 * The behaviour every {@link SessionStore} must show, as one suite that runs
 * against each implementation.
 */
export function describeSessionStoreContract(name: string, factory: SessionStoreFactory): void {
  describe(`SessionStore contract: ${name}`, () => {
    const opened: SessionStore[] = [];
    const open = async (idleTtlSeconds = 3600) => {
      const store = await factory({ idleTtlSeconds });
      opened.push(store);
      return store;
    };
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((store) => store.close?.()));
    });
    /** For a test that runs alongside others (`it.concurrent`): its store is closed when it ends. */
    const openFor = async ({ onTestFinished }: TestContext, idleTtlSeconds: number) => {
      const store = await factory({ idleTtlSeconds });
      onTestFinished(() => store.close?.());
      return store;
    };

    it('keeps messages in append order across calls and returns them oldest first', async () => {
      const store = await open();
      await store.append('s1', [userMessage('one'), toolMessage('two')]);
      await store.append('s1', [userMessage('three')]);
      const messages = await store.read('s1');
      expect(contents(messages)).toEqual(['one', 'two', 'three']);
      expect(messages[1]).toMatchObject({
        role: 'tool',
        name: 'echo',
        metadata: { nested: { items: [1, 2] } },
      });
    });

    it('reads a window of the last messages', async () => {
      const store = await open();
      await store.append('s1', ['a', 'b', 'c', 'd', 'e'].map(userMessage));
      expect(contents(await store.read('s1', { limit: 2 }))).toEqual(['d', 'e']);
      expect(contents(await store.read('s1', { limit: 50 }))).toEqual(['a', 'b', 'c', 'd', 'e']);
      expect(await store.read('s1', { limit: 0 })).toEqual([]);
      expect(await store.read('unknown', { limit: 5 })).toEqual([]);
    });

    it('opens a turn: stores the user message and the running turn, and returns the window ending with it', async () => {
      const store = await open();
      await store.append('s1', ['a', 'b', 'c'].map(userMessage));
      const asked = question('d');
      const turn = runningTurn(asked.id);
      const opened = await store.openTurn('s1', asked, { turn, limit: 2 });
      expect(opened.kind).toBe('opened');
      if (opened.kind !== 'opened') return;
      expect(contents(opened.messages)).toEqual(['c', 'd']);
      expect(contents(await store.read('s1'))).toEqual(['a', 'b', 'c', 'd']);
      expect(await store.listTurns('s1')).toEqual([turn]);
      expect(await store.lastTurn('s1')).toEqual(turn);
      expect(await store.lastTurn('other')).toBeUndefined();
    });

    it('replaces the current turn in place with each write, and keeps earlier turns', async () => {
      const store = await open();
      const first = question('hi');
      const running = runningTurn(first.id);
      await store.openTurn('s1', first, { turn: running, limit: 10 });
      const finished = { ...turnRecord(first.id), turnId: running.turnId };
      await store.append('s1', [toolMessage('hello')], { turn: { ...running, steps: finished.steps } });
      await store.append('s1', [], { turn: finished });
      expect(await store.listTurns('s1')).toEqual([finished]);

      const second = question('again');
      const next = runningTurn(second.id);
      await store.openTurn('s1', second, { turn: next, limit: 10 });
      const failed = {
        ...next,
        status: 'failed' as const,
        endedAt: next.startedAt,
        error: { code: 'x', message: 'boom' },
      };
      await store.append('s1', [], { turn: failed });
      expect(await store.listTurns('s1')).toEqual([finished, failed]);
      expect(contents(await store.read('s1'))).toEqual(['hi', 'hello', 'again']);
      expect(await store.listTurns('other')).toEqual([]);
    });

    it.each(['running', 'awaiting_approval'] as const)(
      'opens nothing while the last turn is %s, and says which turn it is',
      async (status) => {
        const store = await open();
        const first = question('first');
        const turn: TurnRecord = { ...runningTurn(first.id), status };
        await store.openTurn('s1', first, { turn: runningTurn(first.id), limit: 10 });
        await store.append('s1', [], { turn });
        const opened = await store.openTurn('s1', question('second'), { turn: runningTurn('x'), limit: 10 });
        expect(opened).toEqual({ kind: 'unfinished', turn });
        expect(contents(await store.read('s1'))).toEqual(['first']);
        expect(await store.listTurns('s1')).toEqual([turn]);
      },
    );

    it('remembers a request key: the same key opens nothing and names the first turn', async () => {
      const store = await open();
      const first = question('pay invoice 7');
      const turn = runningTurn(first.id);
      const requestKey = { key: 'retry-me', fingerprint: 'f1' };
      await store.openTurn('s1', first, { turn, limit: 10, requestKey });
      await store.append('s1', [], { turn: { ...turnRecord(first.id), turnId: turn.turnId } });
      const again = await store.openTurn('s1', question('pay invoice 7'), {
        turn: runningTurn('x'),
        limit: 10,
        requestKey,
      });
      expect(again).toEqual({ kind: 'duplicate', turnId: turn.turnId, fingerprint: 'f1' });
      expect(contents(await store.read('s1'))).toEqual(['pay invoice 7']);
      // Another session never sees the key.
      const elsewhere = await store.openTurn('s2', question('pay invoice 7'), {
        turn: runningTurn('y'),
        limit: 10,
        requestKey,
      });
      expect(elsewhere.kind).toBe('opened');
    });

    it('keeps stored history apart from the objects callers hold', async () => {
      const store = await open();
      const message = toolMessage('original');
      await store.append('s1', [message]);
      attemptMutation(() => {
        message.content = 'changed after append';
      });
      const [read] = await store.read('s1');
      if (read?.role !== 'tool') throw new Error('expected the tool message back');
      attemptMutation(() => {
        read.content = 'changed after read';
      });
      attemptMutation(() => (read.metadata as { nested: { items: number[] } }).nested.items.push(3));
      expect(await store.read('s1')).toMatchObject([
        { content: 'original', metadata: { nested: { items: [1, 2] } } },
      ]);
    });

    it('hands out windows that the next window does not share, whatever the caller does with them', async () => {
      const store = await open();
      await store.append('s1', [userMessage('a'), toolMessage('b')]);
      const c = question('c');
      const opened = await store.openTurn('s1', c, { turn: runningTurn(c.id), limit: 10 });
      if (opened.kind !== 'opened') throw new Error('expected the turn to open');
      const first = opened.messages;
      first.push(userMessage('pushed by the caller'));
      first.shift();
      const kept = first[0] as MessageItem;
      attemptMutation(() => {
        kept.content = 'changed by the caller';
      });
      attemptMutation(() => (kept.metadata as { nested: { items: number[] } }).nested.items.push(3));
      await store.append('s1', [], { turn: { ...turnRecord(c.id) } });
      const d = question('d');
      const reopened = await store.openTurn('s1', d, { turn: runningTurn(d.id), limit: 10 });
      if (reopened.kind !== 'opened') throw new Error('expected the turn to open');
      expect(contents(reopened.messages)).toEqual(['a', 'b', 'c', 'd']);
      expect(reopened.messages[1]).toMatchObject({ metadata: { nested: { items: [1, 2] } } });
    });

    it('tells whether a session exists, deletes it, and keeps sessions apart', async () => {
      const store = await open();
      expect(await store.exists('s1')).toBe(false);
      await store.append('s1', [userMessage('one')], { turn: turnRecord('x') });
      await store.append('s2', [userMessage('two')]);
      expect(await store.exists('s1')).toBe(true);
      expect(await store.delete('s1')).toBe(true);
      expect(await store.delete('s1')).toBe(false);
      expect(await store.exists('s1')).toBe(false);
      expect(await store.read('s1')).toEqual([]);
      expect(await store.listTurns('s1')).toEqual([]);
      expect(contents(await store.read('s2'))).toEqual(['two']);
    });

    // Each of these waits past a 1 s idle time on its own store and sessions: they wait side by side.
    it.concurrent('forgets a session after its idle time, and every write postpones that', async (context) => {
      const store = await openFor(context, 1);
      await store.append('idle', [userMessage('one')], { turn: turnRecord('x') });
      await store.append('busy', [userMessage('one')]);
      await sleep(650);
      await store.append('busy', [userMessage('two')], { turn: turnRecord('y') });
      await sleep(550);
      expect(await store.exists('idle')).toBe(false);
      expect(await store.read('idle')).toEqual([]);
      expect(await store.listTurns('idle')).toEqual([]);
      expect(contents(await store.read('busy'))).toEqual(['one', 'two']);
      expect(await store.listTurns('busy')).toHaveLength(1);
    });

    it.concurrent('keeps a session whose turn awaits an approval until the approval expires, beyond the idle time', async (context) => {
      const store = await openFor(context, 1);
      const asked = question('refund 500');
      await store.openTurn('paused', asked, { turn: runningTurn(asked.id), limit: 10 });
      const approval = {
        id: 'apr_1',
        toolCallId: 'call_1',
        agent: 'refunds',
        message: 'refund 500',
        risk: 'high' as const,
        requestedBy: 'agent' as const,
        requestedAt: new Date().toISOString(),
        expiresAt: new Date(Date.now() + 2_500).toISOString(),
        status: 'pending' as const,
      };
      await store.append('paused', [], {
        turn: { ...runningTurn(asked.id), status: 'awaiting_approval', approvals: [approval] },
      });
      await sleep(1_300);
      expect(await store.exists('paused')).toBe(true);
      expect((await store.lastTurn('paused'))?.approvals).toEqual([approval]);
    });

    it.concurrent('keeps a session while its lease is held and renewed, beyond the idle time', async (context) => {
      const store = await openFor(context, 1);
      const holder = await store.acquireLease('held', { ttlMs: 600, waitMs: 0 });
      await store.append('held', [userMessage('long turn')], { lease: holder });
      const renewals = setInterval(() => void Promise.resolve(holder.renew()).catch(() => {}), 150);
      try {
        await sleep(1_400);
        expect(contents(await store.read('held'))).toEqual(['long turn']);
      } finally {
        clearInterval(renewals);
        await holder.release();
      }
    });

    it('relays a cancel to every listener sharing the store', async () => {
      const store = await open();
      if (!store.publishCancel || !store.onCancel) return;
      const heard: Array<[string, string | undefined]> = [];
      const stop = store.onCancel((sessionId, turnId) => heard.push([sessionId, turnId]));
      // A subscription over the network needs a moment before it hears anything.
      for (let tries = 0; heard.length === 0 && tries < 50; tries += 1) {
        await store.publishCancel('s1', 'turn_1');
        await sleep(20);
      }
      expect(heard[0]).toEqual(['s1', 'turn_1']);
      stop();
    });

    describe('leases', () => {
      const lease = { ttlMs: 5_000, waitMs: 5_000 };

      it('gives one holder at a time; the next waiter gets the session on release', async () => {
        const store = await open();
        const first = await store.acquireLease('s1', lease);
        let secondAcquired = false;
        const second = attempt(() => store.acquireLease('s1', lease)).then((acquired) => {
          secondAcquired = true;
          return acquired;
        });
        const otherSession = await store.acquireLease('s2', { ...lease, waitMs: 100 });
        await sleep(100);
        expect(secondAcquired).toBe(false);
        await first.release();
        const acquired = await second;
        expect(acquired.token).not.toBe(first.token);
        await Promise.all([acquired.release(), otherSession.release()]);
      });

      it('serves waiters in the order they arrived', async () => {
        const store = await open();
        const holder = await store.acquireLease('s1', lease);
        const order: string[] = [];
        const waiters = ['w1', 'w2', 'w3'].map(async (waiter, index) => {
          await sleep(index * 20);
          const acquired = await store.acquireLease('s1', lease);
          order.push(waiter);
          await acquired.release();
        });
        await sleep(100);
        await holder.release();
        await Promise.all(waiters);
        expect(order).toEqual(['w1', 'w2', 'w3']);
      });

      it('fails with SessionBusyError once waitMs has passed', async () => {
        const store = await open();
        const holder = await store.acquireLease('s1', lease);
        const startedAt = Date.now();
        const waiting = attempt(() => store.acquireLease('s1', { ttlMs: 5_000, waitMs: 200 }));
        // Given up once its own waitMs passed, not much later: before a second waiter, waiting ten times as long.
        const patient = attempt(() => store.acquireLease('s1', { ttlMs: 5_000, waitMs: 2_000 }));
        const error = await settlesBefore(waiting, patient, 'a waiter with ten times its waitMs').catch(
          (caught: unknown) => caught,
        );
        const waited = Date.now() - startedAt;
        expect(SessionBusyError.isInstance(error), String(error)).toBe(true);
        expect((error as Error).message).toContain("Session 's1' is busy");
        expect(waited).toBeGreaterThanOrEqual(180);
        // The patient waiter gets the session on release.
        await holder.release();
        await (await patient).release();
        await (await store.acquireLease('s1', { ttlMs: 5_000, waitMs: 0 })).release();
      });

      it('lets a waiter take over an expired lease; the old holder can neither renew nor release it', async () => {
        const store = await open();
        const crashed = await store.acquireLease('s1', { ttlMs: 300, waitMs: 0 });
        const startedAt = Date.now();
        const next = await store.acquireLease('s1', { ttlMs: 5_000, waitMs: 3_000 });
        expect(Date.now() - startedAt).toBeGreaterThanOrEqual(250);
        expect(await crashed.renew()).toBe(false);
        await crashed.release();
        await expect(
          attempt(() => store.acquireLease('s1', { ttlMs: 5_000, waitMs: 100 })),
        ).rejects.toMatchObject({
          code: 'session_busy',
        });
        await next.release();
        await next.release();
        await (await store.acquireLease('s1', { ttlMs: 5_000, waitMs: 0 })).release();
      });

      it('fences off a holder whose lease was taken over: its writes store nothing', async () => {
        const store = await open();
        const first = userMessage('before the stall');
        const stalled = await store.acquireLease('s1', { ttlMs: 200, waitMs: 0 });
        await store.append('s1', [first], { lease: stalled });
        const next = await store.acquireLease('s1', { ttlMs: 5_000, waitMs: 3_000 });

        const late = userMessage('written after losing the lease');
        const lost = { code: 'session_busy', message: expect.stringContaining('taken over') };
        await expect(attempt(() => store.append('s1', [late], { lease: stalled }))).rejects.toMatchObject(
          lost,
        );
        await expect(
          attempt(() => store.append('s1', [late], { lease: stalled, turn: turnRecord(late.id) })),
        ).rejects.toMatchObject(lost);
        await expect(
          attempt(() =>
            store.openTurn('s1', late as Extract<MessageItem, { role: 'user' }>, {
              turn: runningTurn(late.id),
              limit: 10,
              lease: stalled,
            }),
          ),
        ).rejects.toMatchObject(lost);
        const current = userMessage('from the new holder');
        await store.append('s1', [current], { lease: next });
        expect((await store.read('s1')).map((message) => message.content)).toEqual([
          'before the stall',
          'from the new holder',
        ]);
        expect(await store.listTurns('s1')).toEqual([]);
        await next.release();
      });

      it('gives a session whose lease expired unreleased to the next turn at once, and stores what that turn writes', async () => {
        const store = await open();
        const crashed = await store.acquireLease('s1', { ttlMs: 50, waitMs: 0 });
        await sleep(120); // past its ttl, never renewed nor released: its holder died
        // Nobody was waiting when it expired: the next turn takes the session straight away.
        const next = await store.acquireLease('s1', { ttlMs: 5_000, waitMs: 0 });
        const message = userMessage('after the crash');
        await store.openTurn('s1', message as Extract<MessageItem, { role: 'user' }>, {
          turn: runningTurn(message.id),
          limit: 10,
          lease: next,
        });
        expect((await store.read('s1')).map((each) => each.content)).toEqual(['after the crash']);
        expect(await next.renew()).toBe(true);
        await expect(
          attempt(() => store.append('s1', [userMessage('late')], { lease: crashed })),
        ).rejects.toMatchObject({ code: 'session_busy' });
        await next.release();
      });

      it('keeps a renewed lease past its original ttl', async () => {
        const store = await open();
        const holder = await store.acquireLease('s1', { ttlMs: 400, waitMs: 0 });
        const renewals = setInterval(() => void holder.renew(), 100);
        try {
          await expect(
            attempt(() => store.acquireLease('s1', { ttlMs: 400, waitMs: 800 })),
          ).rejects.toMatchObject({
            code: 'session_busy',
          });
          expect(await holder.renew()).toBe(true);
        } finally {
          clearInterval(renewals);
        }
        await holder.release();
        expect(await holder.renew()).toBe(false);
      });

      it('stops waiting when the signal aborts, without taking the lease later', async () => {
        const store = await open();
        const holder = await store.acquireLease('s1', lease);
        const controller = new AbortController();
        const waiting = attempt(() => store.acquireLease('s1', { ...lease, signal: controller.signal }));
        setTimeout(() => controller.abort(new Error('client went away')), 50);
        await expect(waiting).rejects.toThrow('client went away');
        await holder.release();
        const next = await store.acquireLease('s1', { ...lease, waitMs: 0 });
        await next.release();
      });
    });
  });
}
