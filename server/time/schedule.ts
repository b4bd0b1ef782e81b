/**
 * When a schedule is open (a campaign's, a warm-up's): the next open moment at or after an instant. Windows are
 * wall-clock times in the schedule's IANA zone, so they follow daylight-saving changes (a 09:00 start is
 * 09:00 local on both sides of the change).
 */

/** Open days (0 = Sunday) and wall-clock hours (`09:00` to `17:00`) in an IANA zone, between optional dates. */
export interface WeeklySchedule {
  timezone: string;
  days: number[];
  from: string;
  to: string;
  startDate: string | null;
  endDate: string | null;
}

/** How far ahead to look for an open window before saying there is none. */
const HORIZON_DAYS = 400;

interface LocalParts {
  year: number;
  month: number;
  day: number;
  weekday: number;
  minutes: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();
function formatter(timezone: string): Intl.DateTimeFormat {
  let f = formatters.get(timezone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: timezone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
      weekday: 'short',
    });
    formatters.set(timezone, f);
  }
  return f;
}

const WEEKDAYS: Record<string, number> = { Sun: 0, Mon: 1, Tue: 2, Wed: 3, Thu: 4, Fri: 5, Sat: 6 };

function localParts(timezone: string, at: Date): LocalParts & { seconds: number } {
  const parts: Record<string, string> = {};
  for (const p of formatter(timezone).formatToParts(at)) parts[p.type] = p.value;
  return {
    year: Number(parts.year),
    month: Number(parts.month),
    day: Number(parts.day),
    weekday: WEEKDAYS[parts.weekday],
    minutes: Number(parts.hour) * 60 + Number(parts.minute),
    seconds: Number(parts.second),
  };
}

/** The instant at which the wall clock in `timezone` shows `minutes` past midnight of the given date. */
function instantOf(timezone: string, year: number, month: number, day: number, minutes: number): Date {
  const wanted = Date.UTC(year, month - 1, day, 0, minutes);
  let guess = wanted;
  // Two corrections settle the zone offset, also across a daylight-saving change.
  for (let i = 0; i < 2; i += 1) {
    const p = localParts(timezone, new Date(guess));
    const shown = Date.UTC(p.year, p.month - 1, p.day, 0, p.minutes, p.seconds);
    guess += wanted - shown;
  }
  return new Date(guess);
}

const toMinutes = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));
const isoDate = (y: number, m: number, d: number) => `${y}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`;

/** The first instant >= `at` inside the schedule, or null when the schedule has ended. */
export function nextOpenMoment(schedule: WeeklySchedule, at: Date): Date | null {
  const from = toMinutes(schedule.from);
  const to = toMinutes(schedule.to);
  const today = localParts(schedule.timezone, at);
  // Walk calendar days from the local today; UTC noon keeps the day arithmetic free of zone effects.
  const base = Date.UTC(today.year, today.month - 1, today.day, 12);
  for (let i = 0; i < HORIZON_DAYS; i += 1) {
    const d = new Date(base + i * 86_400_000);
    const date = isoDate(d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate());
    if (schedule.endDate && date > schedule.endDate) return null;
    if (schedule.startDate && date < schedule.startDate) continue;
    if (!schedule.days.includes(d.getUTCDay())) continue;
    const start = instantOf(schedule.timezone, d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate(), from);
    const end = instantOf(schedule.timezone, d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate(), to);
    if (at < end) return at > start ? at : start;
  }
  return null;
}

/** Whether `at` is inside the schedule. */
export const isOpen = (schedule: WeeklySchedule, at: Date): boolean =>
  nextOpenMoment(schedule, at)?.getTime() === at.getTime();

/** Local midnight (in `timezone`) of the day `at` falls on: where daily limits start counting. */
export function startOfLocalDay(timezone: string, at: Date): Date {
  const p = localParts(timezone, at);
  return instantOf(timezone, p.year, p.month, p.day, 0);
}
