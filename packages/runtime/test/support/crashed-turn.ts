import type { MessageItem, UserMessage } from '@switchboard/core';
import type { SessionStore, TurnRecord } from '../../src/stores/session-store.js';

/**
 * Leaves a turn as a replica that died mid-turn would: its user message
 * (`msg_crashed`, "plan a hike"), its record `turn_crashed` still `running`
 * with `steps` and the parts it `traces`, the `replies` it stored, and a
 * lease that expires shortly (50 ms).
 */
export async function leaveCrashedTurn(
  store: SessionStore,
  sessionId: string,
  {
    steps = [],
    replies = [],
    traces,
  }: { steps?: TurnRecord['steps']; replies?: MessageItem[]; traces?: TurnRecord['traces'] } = {},
): Promise<void> {
  const user: UserMessage = {
    id: 'msg_crashed',
    role: 'user',
    content: 'plan a hike',
    createdAt: new Date().toISOString(),
  };
  const lease = await store.acquireLease(sessionId, { ttlMs: 50, waitMs: 0 });
  const turn: TurnRecord = {
    turnId: 'turn_crashed',
    userMessageId: user.id,
    status: 'running',
    startedAt: user.createdAt,
    steps: [],
    ...(traces?.[0] ? { traceId: traces[0].traceId, traces } : {}),
  };
  await store.openTurn(sessionId, user, { turn, limit: 10, lease });
  await store.append(sessionId, replies, { turn: { ...turn, steps }, lease });
}

/**
 * {@link leaveCrashedTurn} for a fan-out: the turn decided to call `maps` and
 * `weather` with "plan a hike", and only `maps` replied (`maps done: plan a
 * hike`) before its replica died.
 */
export async function leaveCrashedFanOut(
  store: SessionStore,
  sessionId: string,
  { traces }: { traces?: TurnRecord['traces'] } = {},
): Promise<void> {
  const now = new Date().toISOString();
  const reply: MessageItem = {
    id: 'msg_maps',
    role: 'tool',
    name: 'maps',
    toolCallId: 'call_maps',
    content: 'maps done: plan a hike',
    status: 'ok',
    createdAt: now,
  };
  const steps: TurnRecord['steps'] = [
    {
      hop: 0,
      kind: 'fan-out',
      calls: [
        { toolCallId: 'call_maps', agent: 'maps', message: 'plan a hike' },
        { toolCallId: 'call_weather', agent: 'weather', message: 'plan a hike' },
      ],
      decidedAt: now,
      durationMs: 0,
    },
  ];
  await leaveCrashedTurn(store, sessionId, { steps, replies: [reply], traces });
}
