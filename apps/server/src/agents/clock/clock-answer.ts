import { ValidationError } from '@switchboard/core';
import { type CalendarDate, daysBetween, findDate, formatCalendarDate, weekdayOf } from './calendar-date.js';
import { findPlace, type ResolvedPlace, validTimeZone } from './time-zones.js';

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

/**
 * Answers a question about the time or the date: "what time is it", "time
 * in Tokyo", "what's the date in Europe/Paris", "what day is it", "how many
 * days until 2026-12-25", "what day of the week is December 25 2026".
 * Throws a {@link ValidationError} for an unknown place or an impossible date.
 */
export function answerClockQuestion(message: string, { now, defaultTimeZone }: ClockOptions): string {
  const text = message.toLowerCase();
  const found = findPlace(text);
  if (found && 'unknown' in found) {
    throw new ValidationError({
      message: `I don't know the time zone of '${found.unknown}'. Try a city such as Tokyo or an IANA zone such as Europe/Paris`,
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
