// The kill part of `bench/replica-soak.ts`: turns held mid-call on one replica, then answered by another.
import { historyProblems, readSessionHistory } from '@switchboard/runtime/testing';

/** One Server-Sent Event of a streamed turn, with when it arrived (`performance.now()`). */
export interface TimedEvent {
  type: string;
  turnId?: string;
  resumed?: string;
  status?: string;
  at: number;
}

/** A streamed `POST /v1/chat`: its status once the turn started, then every event until the stream ends. */
export interface StreamedTurn {
  status: number;
  events: TimedEvent[];
  /** Settles when the stream ends (rejects when the replica went away). */
  ended: Promise<void>;
}

/** Sends a message with `stream: true` and resolves once the response starts (the turn holds its session). */
export async function streamChat(url: string, sessionId: string, message: string): Promise<StreamedTurn> {
  const response = await fetch(`${url}/v1/chat`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ sessionId, message, stream: true }),
    signal: AbortSignal.timeout(60_000),
  });
  const events: TimedEvent[] = [];
  const read = async () => {
    if (!response.body) return;
    const decoder = new TextDecoder();
    let buffered = '';
    for await (const chunk of response.body) {
      const at = performance.now();
      buffered += decoder.decode(chunk, { stream: true });
      let end = buffered.indexOf('\n\n');
      for (; end >= 0; end = buffered.indexOf('\n\n')) {
        const data = /^data: ?(.*)$/m.exec(buffered.slice(0, end))?.[1];
        buffered = buffered.slice(end + 2);
        if (data !== undefined) events.push({ ...(JSON.parse(data) as Omit<TimedEvent, 'at'>), at });
      }
    }
  };
  return { status: response.status, events, ended: read() };
}

/** Waits until the streamed turn shows an event of `type`, or `timeoutMs` passes (then throws). */
export async function eventOf(turn: StreamedTurn, type: string, timeoutMs: number): Promise<TimedEvent> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const found = turn.events.find((event) => event.type === type);
    if (found) return found;
    if (performance.now() > deadline) throw new Error(`no ${type} event within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** How one session the killed replica held was answered by the survivor. */
export interface Takeover {
  sessionId: string;
  status: number;
  /** From the kill to the survivor's answer (its last event; the end of the response when it is not a stream), ms. */
  answeredMs: number;
  /** From the kill to the resumed interrupted turn's first event, ms (NaN when it did not resume). */
  resumedMs: number;
  /** The resumed call, from its agent-start to its agent-end, ms (NaN when it did not resume). */
  recoveredCallMs: number;
  /** The interrupted turn's `recoveries`, as the session shows it afterwards. */
  recoveries: number | undefined;
  /** What is wrong with the session's history afterwards (nothing, when well formed). */
  problems: string[];
}

/**
 * Sends the next message of `sessionId` to `url` (streamed) right after its replica was killed at
 * `killedAt`, times the interrupted turn's recovery and the answer, then reads the session back.
 */
export async function takeOver(url: string, sessionId: string, killedAt: number): Promise<Takeover> {
  const turn = await streamChat(url, sessionId, 'what is 1 + 1?');
  await turn.ended;
  const endedAt = performance.now();
  const resumed = turn.events.find((event) => event.type === 'turn-start' && event.resumed === 'recovery');
  const ofResumed = (type: string) =>
    turn.events.find((event) => event.type === type && event.turnId === resumed?.turnId)?.at ?? Number.NaN;
  const last = turn.events.at(-1);
  const history = await readSessionHistory(
    (path) => fetch(`${url}${path}`, { signal: AbortSignal.timeout(10_000) }),
    sessionId,
  );
  const problems = historyProblems(history.messages, history.turns);
  const statuses = history.turns.map((record) => record.status).join(', ');
  if (statuses !== 'completed, completed') problems.push(`turns ${statuses}, not 'completed, completed'`);
  if (last?.type !== 'turn-end' || last.status !== 'completed')
    problems.push(`the answer ended with ${last?.type} ${last?.status ?? ''}`);
  return {
    sessionId,
    status: turn.status,
    answeredMs: (last?.at ?? endedAt) - killedAt,
    resumedMs: (resumed?.at ?? Number.NaN) - killedAt,
    recoveredCallMs: ofResumed('agent-end') - ofResumed('agent-start'),
    recoveries: history.turns[0]?.recoveries,
    problems,
  };
}
