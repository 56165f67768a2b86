/**
 * @internal The times of compact records: an ISO 8601 text as epoch
 * milliseconds (from a base) when it reads back as the same text, and back,
 * both written by hand because every message and step stored goes through
 * them (see {@link exactIsoMs} and {@link isoOfMs} for what they save).
 *
 * @module
 */

/** `iso` as epoch ms minus `base`, when it reads back exactly; otherwise the text itself. */
export function packTime(iso: string, base = 0): number | string {
  const ms = exactIsoMs(iso);
  return ms === undefined ? iso : ms - base;
}

const ZERO = 48;

/** The digits of `text` from `start` to `end` as a number, or -1 when one is not a digit. */
function digits(text: string, start: number, end: number): number {
  let value = 0;
  for (let index = start; index < end; index++) {
    const digit = text.charCodeAt(index) - ZERO;
    if (digit < 0 || digit > 9) return -1;
    value = value * 10 + digit;
  }
  return value;
}

/**
 * The epoch ms of `iso` when it is exactly what `Date.prototype.toISOString`
 * writes (`YYYY-MM-DDTHH:mm:ss.sssZ`, a real date of a four-digit year), so
 * that the number reads back as the same text; undefined otherwise. Read by
 * hand: `Date.parse` plus `toISOString` to check cost ten times as much, on
 * every message and step stored.
 */
function exactIsoMs(iso: string): number | undefined {
  if (
    iso.length !== 24 ||
    iso.charCodeAt(4) !== 45 || // -
    iso.charCodeAt(7) !== 45 ||
    iso.charCodeAt(10) !== 84 || // T
    iso.charCodeAt(13) !== 58 || // :
    iso.charCodeAt(16) !== 58 ||
    iso.charCodeAt(19) !== 46 || // .
    iso.charCodeAt(23) !== 90 // Z
  )
    return undefined;
  const year = digits(iso, 0, 4);
  const month = digits(iso, 5, 7);
  const day = digits(iso, 8, 10);
  const hour = digits(iso, 11, 13);
  const minute = digits(iso, 14, 16);
  const second = digits(iso, 17, 19);
  const ms = digits(iso, 20, 23);
  if (year < 0 || month < 1 || month > 12 || day < 1 || hour < 0 || hour > 23) return undefined;
  if (minute < 0 || minute > 59 || second < 0 || second > 59 || ms < 0) return undefined;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const days =
    month === 2 ? (leap ? 29 : 28) : month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
  if (day > days) return undefined;
  // Date.UTC reads years 0–99 as 1900–1999: set the full year instead.
  const time = Date.UTC(2000, month - 1, day, hour, minute, second, ms);
  return year >= 100
    ? Date.UTC(year, month - 1, day, hour, minute, second, ms)
    : new Date(time).setUTCFullYear(year);
}

/** The ISO 8601 text of a packed time. */
export function unpackTime(value: unknown, base = 0): string {
  if (typeof value === 'number') return isoOfMs(base + value);
  if (typeof value === 'string') return value;
  throw new TypeError('a time must be a number or a string');
}

const DAY_MS = 86_400_000;
/** The first and last ms whose ISO text has a four-digit year (what {@link exactIsoMs} packs). */
const FIRST_MS = -62_167_219_200_000;
const LAST_MS = 253_402_300_799_999;
let lastDay = Number.NaN;
let lastDayText = '';

function pad(value: number, width: number): string {
  return String(value).padStart(width, '0');
}

/**
 * `new Date(ms).toISOString()`, written by hand: the date part is formatted
 * once per day and reused (the times of a session mostly share one), the
 * time of day is arithmetic. Several times cheaper, and every message and
 * step of a window or a compacted session is read through it.
 */
function isoOfMs(ms: number): string {
  if (!Number.isInteger(ms) || ms < FIRST_MS || ms > LAST_MS) return new Date(ms).toISOString();
  const day = Math.floor(ms / DAY_MS);
  if (day !== lastDay) {
    lastDay = day;
    lastDayText = new Date(day * DAY_MS).toISOString().slice(0, 11);
  }
  let rest = ms - day * DAY_MS;
  const hours = Math.floor(rest / 3_600_000);
  rest -= hours * 3_600_000;
  const minutes = Math.floor(rest / 60_000);
  rest -= minutes * 60_000;
  const seconds = Math.floor(rest / 1000);
  const text = `${lastDayText}${pad(hours, 2)}:${pad(minutes, 2)}:${pad(seconds, 2)}.${pad(rest - seconds * 1000, 3)}Z`;
  // Kept with the message: one flat string, not a rope of the parts.
  text.charCodeAt(0);
  return text;
}
