/**
 * Calendar days in a workspace's time zone, as `YYYY-MM-DD` strings: analytics count by the days the
 * workspace lives in, not by UTC days. Day arithmetic runs on UTC midnights, where every day has 24 hours.
 */
import { invalid, detail } from '../platform/errors';

export const MAX_RANGE_DAYS = 366;
export const DEFAULT_RANGE_DAYS = 30;

/** The calendar day `at` falls on in `timezone`. */
export function dayIn(timezone: string, at: Date): string {
  // en-CA formats as YYYY-MM-DD.
  return new Intl.DateTimeFormat('en-CA', {
    timeZone: timezone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
  }).format(at);
}

export function addDays(day: string, days: number): string {
  const d = new Date(`${day}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + days);
  return d.toISOString().slice(0, 10);
}

function daysFrom(start: string, end: string): number {
  return Math.round((Date.parse(`${end}T00:00:00Z`) - Date.parse(`${start}T00:00:00Z`)) / 86_400_000) + 1;
}

export interface DayRange {
  startDate: string;
  endDate: string;
  timezone: string;
  /** Every day of the range, in order. */
  days: string[];
}

/** The validator checks the YYYY-MM-DD shape only: 2026-02-30 passes it, and must not reach date arithmetic. */
function checkCalendarDay(field: 'startDate' | 'endDate', day: string | undefined): void {
  if (day === undefined) return;
  const parsed = new Date(`${day}T00:00:00Z`);
  if (Number.isNaN(parsed.getTime()) || parsed.toISOString().slice(0, 10) !== day) {
    throw invalid(`${field} is not a calendar date: ${day}.`, [
      detail(field, 'must be a calendar date (YYYY-MM-DD)', 'format', 'query'),
    ]);
  }
}

/** The asked range, or the default: the 30 days ending today. 400 when not real days, reversed or longer than 366 days. */
export function resolveRange(query: { startDate?: string; endDate?: string }, timezone: string, now: Date): DayRange {
  checkCalendarDay('startDate', query.startDate);
  checkCalendarDay('endDate', query.endDate);
  const endDate = query.endDate ?? dayIn(timezone, now);
  const startDate = query.startDate ?? addDays(endDate, -(DEFAULT_RANGE_DAYS - 1));
  const count = daysFrom(startDate, endDate);
  if (count < 1) {
    throw invalid('startDate must not be after endDate.', [
      detail('startDate', 'must not be after endDate', 'range', 'query'),
    ]);
  }
  if (count > MAX_RANGE_DAYS) {
    throw invalid(`The date range may span at most ${MAX_RANGE_DAYS} days.`, [
      detail('startDate', `range longer than ${MAX_RANGE_DAYS} days`, 'range', 'query'),
    ]);
  }
  return { startDate, endDate, timezone, days: Array.from({ length: count }, (_, i) => addDays(startDate, i)) };
}
