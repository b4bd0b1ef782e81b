/**
 * The warm-up plan, pure: how many warm-up emails an account sends today (the ramp), when its window is open
 * (reusing the campaign schedule's wall-clock rules), how long to wait before the next one, and the health
 * label of a placement score.
 */
import { dayIn } from '../../time/days';
import { nextOpenMoment, startOfLocalDay } from '../../time/schedule';

export interface WarmupPlanSettings {
  dailyLimit: number;
  increasePerDay: number;
  windowFrom: string;
  windowTo: string;
  weekdaysOnly: boolean;
  timezone: string;
  startedAt: Date | null;
}

const DAY_MS = 86_400_000;
/** The shortest gap between two warm-up emails of one account (a burst looks automated). */
export const MIN_GAP_MS = 60_000;

/** Day n of the ramp sends n x increasePerDay (at least 1 a day), never more than dailyLimit. */
export function rampTarget(plan: WarmupPlanSettings, now: Date): number {
  const start = dayIn(plan.timezone, plan.startedAt ?? now);
  const today = dayIn(plan.timezone, now);
  const day = Math.round((Date.parse(`${today}T00:00:00Z`) - Date.parse(`${start}T00:00:00Z`)) / DAY_MS) + 1;
  return Math.min(plan.dailyLimit, Math.max(1, plan.increasePerDay) * Math.max(1, day));
}

function schedule(plan: WarmupPlanSettings) {
  return {
    timezone: plan.timezone,
    days: plan.weekdaysOnly ? [1, 2, 3, 4, 5] : [0, 1, 2, 3, 4, 5, 6],
    from: plan.windowFrom,
    to: plan.windowTo,
  };
}

/** The first instant at or after `at` inside the window (a window always opens within a week). */
export function windowOpensAt(plan: WarmupPlanSettings, at: Date): Date {
  return (
    nextOpenMoment(schedule(plan) as Parameters<typeof nextOpenMoment>[0], at) ?? new Date(at.getTime() + 7 * DAY_MS)
  );
}

/** When today's window closes (local wall clock; the gap computation tolerates a DST hour). */
export function windowClosesAt(plan: WarmupPlanSettings, at: Date): Date {
  const [h, m] = plan.windowTo.split(':').map(Number);
  return new Date(startOfLocalDay(plan.timezone, at).getTime() + (h * 60 + m) * 60_000);
}

/** The next local midnight: when a new day's count starts. */
export function nextLocalDay(timezone: string, at: Date): Date {
  return startOfLocalDay(timezone, new Date(startOfLocalDay(timezone, at).getTime() + DAY_MS + 3 * 3_600_000));
}

/**
 * The wait before the next warm-up email: what is left of the window shared among the emails still to send
 * today, times a random factor 0.5-1.5, so sends spread over the day at uneven gaps.
 */
export function nextGapMs(plan: WarmupPlanSettings, now: Date, remaining: number, random = Math.random()): number {
  const left = Math.max(0, windowClosesAt(plan, now).getTime() - now.getTime());
  if (remaining <= 0) return left;
  return Math.max(MIN_GAP_MS, Math.round((left / (remaining + 1)) * (0.5 + random)));
}

export type HealthLabel = 'excellent' | 'good' | 'fair' | 'poor' | 'unknown';

/** inbox / (inbox + spam) in percent (2 decimals) and its label; null and `unknown` without data. */
export function healthOf(inbox: number, spam: number): { score: number | null; label: HealthLabel } {
  if (inbox + spam === 0) return { score: null, label: 'unknown' };
  const score = Math.round((inbox / (inbox + spam)) * 10_000) / 100;
  return { score, label: score >= 95 ? 'excellent' : score >= 85 ? 'good' : score >= 70 ? 'fair' : 'poor' };
}
