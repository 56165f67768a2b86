import type { ApprovalRisk, RouteStep, TurnStatus } from '../turns/turn-record.js';

interface EventBase {
  sessionId: string;
  turnId: string;
  /** Chunks of one message share a `messageId`. */
  messageId: string;
  /** True on the last chunk of a message. */
  endOfMessage?: boolean;
  /** True on the last event of the turn (or of its part, when it pauses for approval). */
  endOfDialog?: boolean;
  /**
   * Empty until the event is numbered (see {@link TurnEvent}). The engine
   * builds every event with it, last, so that numbering writes a field the
   * event already has rather than adding one to each event (measured: a
   * property added to events of ten shapes goes through V8's runtime, and
   * takes an extra object per event).
   */
  eventId?: string;
}

interface AgentEventBase extends EventBase {
  toolCallId: string;
  agent: string;
  /** Set on the calls an orchestrator agent makes: the id of the call to that orchestrator agent. */
  parentToolCallId?: string;
}

/**
 * The stream of events of one turn, in the order they happen. Names are
 * noun-verb. Each carries an `eventId`, unique and increasing within its
 * turn (see {@link TurnEventBody} for the rest).
 */
export type TurnEvent = TurnEventBody & {
  /**
   * `<part>-<seq>`: unique and increasing within the turn, also across its
   * parts (after an approval, after a recovery on another replica). Send it
   * back as `Last-Event-ID` (or `?after=`) to rejoin the turn's stream after it.
   */
  eventId: string;
};

/** A turn event as the engine builds it, before it is numbered (see {@link TurnEvent}). */
export type TurnEventBody =
  | (EventBase & {
      type: 'turn-start';
      message: string;
      /** Set when a stored turn continues: after its approvals were resolved, or after its replica stopped. */
      resumed?: 'approval' | 'recovery';
    })
  | (EventBase & { type: 'route'; step: RouteStep })
  | (AgentEventBase & { type: 'agent-start'; message: string })
  | (AgentEventBase & { type: 'agent-delta'; delta: string })
  | (AgentEventBase & { type: 'agent-end'; status: 'ok' | 'error'; content: string })
  | (EventBase & {
      type: 'approval-request';
      approvalId: string;
      toolCallId: string;
      agent: string;
      message: string;
      reason?: string;
      risk: ApprovalRisk;
      expiresAt: string | null;
    })
  | (EventBase & {
      /**
       * Part of the answer as the orchestrator writes it (`streamAnswer`); the
       * `message` event that follows, with the same `messageId`, holds the
       * whole answer and wins. `reset`: drop what was streamed so far.
       */
      type: 'answer-delta';
      delta: string;
      reset?: boolean;
    })
  | (EventBase & { type: 'message'; content: string })
  | (EventBase & { type: 'error'; code: string; message: string })
  | (EventBase & { type: 'turn-end'; status: TurnStatus; traceId?: string });

/** The type names of {@link TurnEvent}. */
export type TurnEventType = TurnEvent['type'];
