import type { BudgetPeriod } from './budget-options.js';

/** One period of a budget: its name in counter keys, and when it ends. */
export interface PeriodWindow {
  /** `2026-11-29T13` (hour), `2026-11-29` (day), `2026-11` (month): UTC. */
  id: string;
  /** When the next period starts (ms since the epoch). */
  endsAt: number;
}

/**
 * How long a period's counter is kept past the period's end, so that a
 * replica whose clock runs a little behind still finds it (ms).
 */
export const COUNTER_GRACE_MS = 3_600_000;

/** The UTC period `now` falls in. */
export function periodAt(period: BudgetPeriod, now: number): PeriodWindow {
  const date = new Date(now);
  const year = date.getUTCFullYear();
  const month = date.getUTCMonth();
  const yearMonth = `${year}-${String(month + 1).padStart(2, '0')}`;
  if (period === 'month') return { id: yearMonth, endsAt: Date.UTC(year, month + 1, 1) };
  const day = date.getUTCDate();
  const yearMonthDay = `${yearMonth}-${String(day).padStart(2, '0')}`;
  if (period === 'day') return { id: yearMonthDay, endsAt: Date.UTC(year, month, day + 1) };
  const hour = date.getUTCHours();
  return {
    id: `${yearMonthDay}T${String(hour).padStart(2, '0')}`,
    endsAt: Date.UTC(year, month, day, hour + 1),
  };
}

/** How long a counter of the period `window` must live from `now` (ms, at least one second). */
export function counterTtlMs(window: PeriodWindow, now: number): number {
  return Math.max(1000, window.endsAt - now + COUNTER_GRACE_MS);
}
