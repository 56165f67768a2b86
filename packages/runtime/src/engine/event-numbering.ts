import type { TurnEventLog, TurnLogKey } from '../stores/turn-event-log.js';
import type { TurnEvent, TurnEventBody } from './events.js';

/** Where a part of a turn sends its events, numbered (see {@link partEmitter}). */
export type PartEmitter = (event: TurnEventBody) => void;

/**
 * Numbers one part's events `<part>-1`, `<part>-2`… and sends each to the
 * turn's event log and to the request's listener. Undefined when there is
 * neither, so a turn nobody hears builds no events. With `withholdDeltas`
 * (output guardrails), text is not streamed as it is written, to either: a
 * delta could carry what a guardrail would remove.
 */
export function partEmitter(
  log: TurnEventLog | undefined,
  key: TurnLogKey,
  part: number,
  listener: ((event: TurnEvent) => void) | undefined,
  withholdDeltas: boolean,
): PartEmitter | undefined {
  if (!log && !listener) return undefined;
  const prefix = `${part}-`;
  let seq = 0;
  return (body) => {
    if (withholdDeltas && (body.type === 'agent-delta' || body.type === 'answer-delta')) return;
    // The engine builds each event for this call alone: numbering it in place saves a copy per event.
    const event = body as TurnEvent;
    seq += 1;
    event.eventId = prefix + seq;
    log?.append(key, event);
    listener?.(event);
  };
}
