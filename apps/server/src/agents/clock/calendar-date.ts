import { ValidationError } from '@switchboard/core';

/** A day on the calendar, without a time or a zone. */
export interface CalendarDate {
  year: number;
  /** 1 to 12. */
  month: number;
  day: number;
}

const MONTHS = [
  'january',
  'february',
  'march',
  'april',
  'may',
  'june',
  'july',
  'august',
  'september',
  'october',
  'november',
  'december',
];
const MONTH =
  '(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)';
const DAY = String.raw`(\d{1,2})(?:st|nd|rd|th)?`;
const YEAR = String.raw`(?:,?\s+(\d{4}))?`;

const ISO = /\b(\d{4})-(\d{1,2})-(\d{1,2})\b/;
const MONTH_FIRST = new RegExp(String.raw`\b${MONTH}\.?\s+${DAY}\b${YEAR}`);
const DAY_FIRST = new RegExp(String.raw`\b${DAY}\s+(?:of\s+)?${MONTH}\b\.?${YEAR}`);
const HOLIDAYS: ReadonlyArray<[RegExp, number, number]> = [
  [/\bchristmas\b|\bxmas\b/, 12, 25],
  [/\bnew\s+year(?:'?s)?(?:\s+day)?\b/, 1, 1],
  [/\bhalloween\b/, 10, 31],
  [/\bvalentine(?:'?s)?(?:\s+day)?\b/, 2, 14],
];

const DAY_MS = 86_400_000;
const toUtc = ({ year, month, day }: CalendarDate) => Date.UTC(year, month - 1, day);

function monthNumber(name: string): number {
  return MONTHS.findIndex((month) => month.startsWith(name.slice(0, 3))) + 1;
}

function checked(date: CalendarDate): CalendarDate {
  const real = new Date(toUtc(date));
  if (
    real.getUTCFullYear() !== date.year ||
    real.getUTCMonth() + 1 !== date.month ||
    real.getUTCDate() !== date.day
  ) {
    throw new ValidationError({
      message: `${date.year}-${String(date.month).padStart(2, '0')}-${String(date.day).padStart(2, '0')} is not a real date`,
    });
  }
  return date;
}

/** Without a year, the next time that day comes: this year if it has not passed, else next year. */
function nextOccurrence(month: number, day: number, today: CalendarDate): CalendarDate {
  const thisYear = checked({ year: today.year, month, day });
  return toUtc(thisYear) >= toUtc(today) ? thisYear : checked({ year: today.year + 1, month, day });
}

/**
 * Finds a date in a message: `2026-12-25`, `December 25 2026`, `25th of Dec`,
 * `christmas`, `new year`. A date without a year is the next one to come.
 * Throws a {@link ValidationError} for an impossible date such as `2026-02-30`.
 */
export function findDate(message: string, today: CalendarDate): CalendarDate | undefined {
  const text = message.toLowerCase();
  const iso = ISO.exec(text);
  if (iso) return checked({ year: Number(iso[1]), month: Number(iso[2]), day: Number(iso[3]) });
  const monthFirst = MONTH_FIRST.exec(text);
  const dayFirst = DAY_FIRST.exec(text);
  const [monthName, dayText, yearText] = monthFirst
    ? [monthFirst[1], monthFirst[2], monthFirst[3]]
    : dayFirst
      ? [dayFirst[2], dayFirst[1], dayFirst[3]]
      : [];
  if (monthName && dayText) {
    const month = monthNumber(monthName);
    const day = Number(dayText);
    return yearText ? checked({ year: Number(yearText), month, day }) : nextOccurrence(month, day, today);
  }
  for (const [pattern, month, day] of HOLIDAYS)
    if (pattern.test(text)) return nextOccurrence(month, day, today);
  return undefined;
}

/** Whole days from `from` to `to`: positive when `to` is later. */
export function daysBetween(from: CalendarDate, to: CalendarDate): number {
  return Math.round((toUtc(to) - toUtc(from)) / DAY_MS);
}

/** The date `days` days after `date` (before it when negative). */
export function addDays(date: CalendarDate, days: number): CalendarDate {
  const moved = new Date(toUtc(date) + days * DAY_MS);
  return { year: moved.getUTCFullYear(), month: moved.getUTCMonth() + 1, day: moved.getUTCDate() };
}

const dateFormat = new Intl.DateTimeFormat('en-GB', {
  timeZone: 'UTC',
  weekday: 'long',
  day: 'numeric',
  month: 'long',
  year: 'numeric',
});

/** `Friday, 25 December 2026`, the same whatever the ICU version's punctuation. */
export function formatCalendarDate(date: CalendarDate): string {
  const parts = Object.fromEntries(
    dateFormat.formatToParts(toUtc(date)).map((part) => [part.type, part.value]),
  );
  return `${parts.weekday}, ${parts.day} ${parts.month} ${parts.year}`;
}

/** The weekday of a date: `Friday`. */
export function weekdayOf(date: CalendarDate): string {
  return formatCalendarDate(date).split(',')[0] ?? '';
}
