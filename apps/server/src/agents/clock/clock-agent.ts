import { ValidationError } from '@switchboard/core';
import { type Agent, defineAgent } from '@switchboard/runtime';
import { answerClockQuestion } from './clock-answer.js';

/** Options of {@link createClockAgent}. */
export interface ClockAgentOptions {
  /** The current instant; inject a fixed clock in tests. */
  now?: () => Date;
  /** The zone used when a message names none; the server's own zone by default. */
  timeZone?: string;
}

/**
 * Creates the clock agent: the current time and date, in the server's zone,
 * a city ("time in Tokyo", "time in 東京") or an IANA zone ("date in
 * Europe/Paris"), the day of the week, days until or since a date, and the
 * date some days from today. A place it does not know is answered with the
 * places it knows, never with the time of the server's zone.
 */
export function createClockAgent({
  now = () => new Date(),
  timeZone = Intl.DateTimeFormat().resolvedOptions().timeZone,
}: ClockAgentOptions = {}): Agent {
  return defineAgent({
    name: 'clock',
    description:
      'Tells the current time and date anywhere (a city, in any script, or an IANA time zone), the day of the week, how many days until or since a date, and the date some days or weeks from today.',
    // Phrases outweigh single words: "what time is it in America/Port-au-Prince" stays here, not with the calculator's "/" and "-".
    keywords: [
      'time',
      'what time',
      'time in',
      'what day',
      'day of the week',
      'date',
      'day',
      'today',
      'clock',
      'timezone',
      'time zone',
      'weekday',
      'days until',
      'days since',
    ],
    metadata: {
      examples: ['what time is it?', 'time in Tokyo', 'what day is it?', 'how many days until 2026-12-25?'],
    },
    run(message) {
      try {
        return answerClockQuestion(message, { now: now(), defaultTimeZone: timeZone });
      } catch (error) {
        if (ValidationError.isInstance(error)) return `Sorry, ${(error as Error).message}.`;
        throw error;
      }
    },
  });
}

/** The clock agent with the real clock and the server's time zone. */
export const clockAgent: Agent = createClockAgent();
