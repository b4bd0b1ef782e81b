import { nextOpenMoment, startOfLocalDay } from '../../server/time/schedule';

const weekdays = {
  timezone: 'America/New_York',
  days: [1, 2, 3, 4, 5],
  from: '09:00',
  to: '17:00',
  startDate: null,
  endDate: null,
};

describe('sending schedule', () => {
  it('is open inside the window and rolls forward to the next sending day outside it', () => {
    // Monday 2026-11-23 10:00 in New York (UTC-5).
    expect(nextOpenMoment(weekdays, new Date('2026-11-23T15:00:00Z'))?.toISOString()).toBe('2026-11-23T15:00:00.000Z');
    // Monday 17:00 local: closed, next is Tuesday 09:00.
    expect(nextOpenMoment(weekdays, new Date('2026-11-23T22:00:00Z'))?.toISOString()).toBe('2026-11-24T14:00:00.000Z');
    // Saturday: next is Monday 09:00.
    expect(nextOpenMoment(weekdays, new Date('2026-11-28T15:00:00Z'))?.toISOString()).toBe('2026-11-30T14:00:00.000Z');
  });

  it('keeps wall-clock windows across a daylight-saving change', () => {
    // Friday 2026-03-06 after hours (EST, UTC-5) -> Monday 2026-03-09 09:00 EDT (UTC-4).
    expect(nextOpenMoment(weekdays, new Date('2026-03-06T23:00:00Z'))?.toISOString()).toBe('2026-03-09T13:00:00.000Z');
    // Europe/Berlin autumn change: Sunday 2026-10-25 is 23 hours long.
    const berlin = { timezone: 'Europe/Berlin', days: [0], from: '09:00', to: '10:00', startDate: null, endDate: null };
    expect(nextOpenMoment(berlin, new Date('2026-10-24T12:00:00Z'))?.toISOString()).toBe('2026-10-25T08:00:00.000Z');
    expect(startOfLocalDay('Europe/Berlin', new Date('2026-10-25T12:00:00Z')).toISOString()).toBe(
      '2026-10-24T22:00:00.000Z',
    );
  });

  it('honours start and end dates', () => {
    const dated = { ...weekdays, startDate: '2026-12-01', endDate: '2026-12-02' };
    expect(nextOpenMoment(dated, new Date('2026-11-23T15:00:00Z'))?.toISOString()).toBe('2026-12-01T14:00:00.000Z');
    expect(nextOpenMoment(dated, new Date('2026-12-02T23:00:00Z'))).toBeNull();
  });
});
