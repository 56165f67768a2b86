import { describe, expect, it } from 'vitest';
import { daysBetween, findDate, formatCalendarDate } from '../src/agents/clock/calendar-date.js';
import { answerClockQuestion } from '../src/agents/clock/clock-answer.js';
import { findPlace, resolvePlace } from '../src/agents/clock/time-zones.js';

/** Tuesday 5 May 2026, 15:04 UTC. */
const NOW = new Date('2026-05-05T15:04:00Z');
const ask = (message: string, now = NOW, defaultTimeZone = 'Europe/Paris') =>
  answerClockQuestion(message, { now, defaultTimeZone });

function errorOf(message: string): string {
  try {
    ask(message);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error(`expected '${message}' to fail`);
}

describe('clock: current time and date', () => {
  it.each([
    ['what time is it?', 'It is 17:04 on Tuesday, 5 May 2026 (Europe/Paris, GMT+2).'],
    ['time in Tokyo', 'It is 00:04 on Wednesday, 6 May 2026 in Tokyo (Asia/Tokyo, GMT+9).'],
    ['tokyo time', 'It is 00:04 on Wednesday, 6 May 2026 in Tokyo (Asia/Tokyo, GMT+9).'],
    [
      'what time is it in new york right now?',
      'It is 11:04 on Tuesday, 5 May 2026 in New York (America/New_York, GMT-4).',
    ],
    ['time in Kolkata', 'It is 20:34 on Tuesday, 5 May 2026 in Kolkata (Asia/Kolkata, GMT+5:30).'],
    ['time in mumbai', 'It is 20:34 on Tuesday, 5 May 2026 in Mumbai (Asia/Kolkata, GMT+5:30).'],
    ['what time is it in the UK', 'It is 16:04 on Tuesday, 5 May 2026 in UK (Europe/London, GMT+1).'],
    ['time in hong kong', 'It is 23:04 on Tuesday, 5 May 2026 in Hong Kong (Asia/Hong_Kong, GMT+8).'],
    ['what time is it in utc', 'It is 15:04 on Tuesday, 5 May 2026 in UTC.'],
    ['time in Australia/Sydney', 'It is 01:04 on Wednesday, 6 May 2026 in Australia/Sydney (GMT+10).'],
    ["what's the date in europe/paris", 'Today is Tuesday, 5 May 2026 in Europe/Paris (GMT+2).'],
    ['what day is it', 'Today is Tuesday, 5 May 2026 (Europe/Paris, GMT+2).'],
    [
      'what is the date today in sydney',
      'Today is Wednesday, 6 May 2026 in Sydney (Australia/Sydney, GMT+10).',
    ],
  ])('%s', (message, expected) => {
    expect(ask(message)).toBe(expected);
  });

  it('uses the server zone by default, and UTC when that zone is invalid', () => {
    expect(ask('what time is it', NOW, 'UTC')).toBe('It is 15:04 on Tuesday, 5 May 2026 (UTC).');
    expect(ask('what time is it', NOW, 'Not/AZone')).toBe('It is 15:04 on Tuesday, 5 May 2026 (UTC).');
  });

  it('follows daylight saving time', () => {
    expect(ask('time in new york', new Date('2026-01-15T12:00:00Z'))).toContain(
      '07:00 on Thursday, 15 January 2026',
    );
    expect(ask('time in new york', new Date('2026-07-15T12:00:00Z'))).toContain(
      '08:00 on Wednesday, 15 July 2026',
    );
  });

  it('shows midnight as 00:00', () => {
    expect(ask('time in utc', new Date('2026-05-05T00:00:00Z'))).toBe(
      'It is 00:00 on Tuesday, 5 May 2026 in UTC.',
    );
  });
});

describe('clock: days until and since a date', () => {
  it.each([
    ['how many days until 2026-12-25', 'There are 234 days until Friday, 25 December 2026.'],
    ['days until christmas', 'There are 234 days until Friday, 25 December 2026.'],
    ['how many days until 25th of December?', 'There are 234 days until Friday, 25 December 2026.'],
    ['days till Dec 25, 2027', 'There are 599 days until Saturday, 25 December 2027.'],
    ['days until new year', 'There are 241 days until Friday, 1 January 2027.'],
    ['how many days until may 6', 'There is 1 day until Wednesday, 6 May 2026.'],
    ['how many days until 2026-05-05', 'Tuesday, 5 May 2026 is today.'],
    ['days until 2026-05-01', 'Friday, 1 May 2026 was 4 days ago.'],
    ['how many days since 2026-01-01', 'It has been 124 days since Thursday, 1 January 2026.'],
    ['days since 2026-05-10', 'Sunday, 10 May 2026 is 5 days away.'],
  ])('%s', (message, expected) => {
    expect(ask(message)).toBe(expected);
  });

  it('counts from the date in the place asked about', () => {
    // 00:04 on 6 May in Tokyo: one day less to go than in Paris.
    expect(ask('how many days until 2026-12-25 in tokyo')).toBe(
      'There are 233 days until Friday, 25 December 2026.',
    );
  });

  it('names the weekday of a date', () => {
    expect(ask('what day of the week is december 25 2026')).toBe('25 December 2026 is a Friday.');
    expect(ask('what day was 2000-01-01')).toBe('1 January 2000 was a Saturday.');
  });
});

describe('clock: a date counted from today', () => {
  it.each([
    ["what's the date 30 days from now?", '30 days from today is Thursday, 4 June 2026.'],
    ['what day is it in 2 weeks', '2 weeks from today is Tuesday, 19 May 2026.'],
    ['what was the date 10 days ago', '10 days ago was Saturday, 25 April 2026.'],
    ['the date 1 day from today in Tokyo', '1 day from today is Thursday, 7 May 2026.'],
  ])('%s', (message, expected) => {
    expect(ask(message)).toBe(expected);
  });
});

describe('clock: errors', () => {
  it('names a place it does not know', () => {
    expect(errorOf('time in Atlantis')).toMatch(
      /^I don't know the time zone of Atlantis; I know: Tokyo, Seoul, .*, New York, .*, such as Kolkata or Europe\/Paris$/,
    );
    expect(errorOf('time in Mars/Olympus')).toMatch(/time zone of Mars\/Olympus; I know: /);
    expect(errorOf('time in constructor')).toMatch(/^I don't know the time zone of Constructor; /);
    expect(errorOf('time in 火星')).toMatch(/^I don't know the time zone of 火星; I know: /);
  });

  it('refuses an impossible date', () => {
    expect(errorOf('days until 2026-02-30')).toBe('2026-02-30 is not a real date');
    expect(errorOf('days until 2026-13-01')).toBe('2026-13-01 is not a real date');
  });

  it('asks which date when a countdown has none', () => {
    expect(errorOf('how many days until')).toBe(
      "which date? Try 'how many days until 2026-12-25' or 'days until christmas'",
    );
  });
});

describe('clock: places and dates', () => {
  it('reads holidays and ordinary words as dates, not as places', () => {
    expect(findPlace('how many days until christmas')).toBeUndefined();
    expect(findPlace('how many days until easter')).toBeUndefined();
    expect(findPlace('what is the date for christmas')).toEqual({ unknown: 'christmas' });
    expect(findPlace('what time is it in 3 days')).toBeUndefined();
  });

  it('resolves cities, countries, abbreviations and IANA ids', () => {
    expect(resolvePlace('San Francisco')).toEqual({
      timeZone: 'America/Los_Angeles',
      place: 'San Francisco',
    });
    expect(resolvePlace('japan')).toEqual({ timeZone: 'Asia/Tokyo', place: 'Japan' });
    expect(resolvePlace('nyc')).toEqual({ timeZone: 'America/New_York', place: 'NYC' });
    expect(resolvePlace('lisbon')).toEqual({ timeZone: 'Europe/Lisbon', place: 'Lisbon' });
    expect(resolvePlace('america/los_angeles')).toEqual({
      timeZone: 'America/Los_Angeles',
      place: 'America/Los_Angeles',
    });
    expect(resolvePlace('gotham')).toBeUndefined();
    expect(resolvePlace('x'.repeat(500))).toBeUndefined();
  });

  it('takes the next occurrence of a date without a year', () => {
    const newYearsEve = { year: 2026, month: 12, day: 31 };
    expect(findDate('days until jan 2', newYearsEve)).toEqual({ year: 2027, month: 1, day: 2 });
    expect(findDate('days until dec 31', newYearsEve)).toEqual({ year: 2026, month: 12, day: 31 });
    expect(findDate('nothing here', newYearsEve)).toBeUndefined();
  });

  it('knows leap years', () => {
    expect(findDate('2028-02-29', { year: 2026, month: 1, day: 1 })).toEqual({
      year: 2028,
      month: 2,
      day: 29,
    });
    expect(() => findDate('2027-02-29', { year: 2026, month: 1, day: 1 })).toThrow(
      '2027-02-29 is not a real date',
    );
    expect(daysBetween({ year: 2028, month: 2, day: 28 }, { year: 2028, month: 3, day: 1 })).toBe(2);
    expect(formatCalendarDate({ year: 2028, month: 2, day: 29 })).toBe('Tuesday, 29 February 2028');
  });
});
