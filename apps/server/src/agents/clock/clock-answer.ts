import { ValidationError } from '@switchboard/core';
import {
  addDays,
  type CalendarDate,
  daysBetween,
  findDate,
  formatCalendarDate,
  weekdayOf,
} from './calendar-date.js';
import {
  describeKnownPlaces,
  displayName,
  findPlace,
  type ResolvedPlace,
  validTimeZone,
} from './time-zones.js';

/** Where and when "now" is for one answer. */
export interface ClockOptions {
  /** The current instant. */
  now: Date;
  /** The zone used when the message names none. */
  defaultTimeZone: string;
}

interface ZonedNow {
  date: CalendarDate;
  /** `15:04` */
  time: string;
  /** `GMT+9`, `GMT` */
  offset: string;
}

function zonedNow(now: Date, timeZone: string): ZonedNow {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', {
      timeZone,
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
      timeZoneName: 'shortOffset',
    })
      .formatToParts(now)
      .map((part) => [part.type, part.value]),
  );
  return {
    date: { year: Number(parts.year), month: Number(parts.month), day: Number(parts.day) },
    time: `${parts.hour}:${parts.minute}`,
    offset: parts.timeZoneName ?? '',
  };
}

const plural = (count: number, word: string) => `${count} ${word}${count === 1 ? '' : 's'}`;

function describePlace({ place, timeZone }: ResolvedPlace, offset: string, named: boolean): string {
  if (timeZone === 'UTC') return named ? ' in UTC' : ' (UTC)';
  if (!named) return ` (${timeZone}, ${offset})`;
  return place === timeZone ? ` in ${timeZone} (${offset})` : ` in ${place} (${timeZone}, ${offset})`;
}

function countdown(today: CalendarDate, target: CalendarDate, since: boolean): string {
  const days = daysBetween(today, target);
  const when = formatCalendarDate(target);
  if (days === 0) return `${when} is today.`;
  if (since) {
    return days < 0
      ? `It has been ${plural(-days, 'day')} since ${when}.`
      : `${when} is ${plural(days, 'day')} away.`;
  }
  if (days < 0) return `${when} was ${plural(-days, 'day')} ago.`;
  return `There ${days === 1 ? 'is' : 'are'} ${plural(days, 'day')} until ${when}.`;
}

/** "30 days from now", "in 2 weeks", "10 days ago". */
const OFFSET_AFTER = /\b(\d{1,5})\s+(days?|weeks?)\s+(?:from\s+(?:now|today)|later|hence)\b/;
const OFFSET_IN = /\bin\s+(\d{1,5})\s+(days?|weeks?)\b/;
const OFFSET_AGO = /\b(\d{1,5})\s+(days?|weeks?)\s+ago\b/;

/** A date counted from today, as days (negative in the past) and the phrase that said it. */
function findOffset(text: string): { days: number; phrase: string } | undefined {
  const ago = OFFSET_AGO.exec(text);
  const match = ago ?? OFFSET_AFTER.exec(text) ?? OFFSET_IN.exec(text);
  if (!match) return undefined;
  const count = Number(match[1]);
  const weeks = match[2]?.startsWith('week') ?? false;
  const days = (weeks ? 7 : 1) * count * (ago ? -1 : 1);
  return { days, phrase: plural(count, weeks ? 'week' : 'day') };
}

/**
 * Answers a question about the time or the date: "what time is it", "time
 * in Tokyo", "what's the date in Europe/Paris", "what day is it", "how many
 * days until 2026-12-25", "what day of the week is December 25 2026", "the
 * date 30 days from now".
 * Throws a {@link ValidationError} for an unknown place or an impossible date.
 */
export function answerClockQuestion(message: string, { now, defaultTimeZone }: ClockOptions): string {
  const text = message.toLowerCase();
  const found = findPlace(text);
  if (found && 'unknown' in found) {
    // Never fall back to the server's zone: the user asked about a place, and would read a wrong time.
    throw new ValidationError({
      message: `I don't know the time zone of ${displayName(found.unknown)}; I know: ${describeKnownPlaces()}`,
    });
  }
  const timeZone = validTimeZone(defaultTimeZone) ?? 'UTC';
  const place = found ?? { timeZone, place: timeZone };
  const current = zonedNow(now, place.timeZone);
  const where = describePlace(place, current.offset, found !== undefined);

  const since = /\bsince\b/.test(text);
  const countingDays = since || /\b(?:until|till|til|before|to go|left)\b/.test(text);
  const target = findDate(text, current.date);
  if (countingDays) {
    if (!target) {
      throw new ValidationError({
        message: "which date? Try 'how many days until 2026-12-25' or 'days until christmas'",
      });
    }
    return countdown(current.date, target, since);
  }
  const offset = findOffset(text);
  if (offset && !target) {
    const date = formatCalendarDate(addDays(current.date, offset.days));
    return offset.days < 0 ? `${offset.phrase} ago was ${date}.` : `${offset.phrase} from today is ${date}.`;
  }
  if (target) {
    const verb = daysBetween(current.date, target) < 0 ? 'was' : 'is';
    const [weekday, rest] = [weekdayOf(target), formatCalendarDate(target).split(', ')[1]];
    return `${rest} ${verb} a ${weekday}.`;
  }
  const today = formatCalendarDate(current.date);
  if (/\b(?:date|today|day|weekday)\b/.test(text) && !/\btime\b/.test(text))
    return `Today is ${today}${where}.`;
  return `It is ${current.time} on ${today}${where}.`;
}
