/** The warm-up plan and content, pure: ramp by day, window and weekdays in the workspace's zone, gaps, health, marker. */
import {
  healthOf,
  nextGapMs,
  rampTarget,
  windowOpensAt,
  type WarmupPlanSettings,
} from '../../server/modules/warmup/plan';
import { firstMessage, hasMarker, markerCode, replyMessage } from '../../server/modules/warmup/content';
import { headerMessageId } from '../../server/modules/warmup/service';

const plan = (over: Partial<WarmupPlanSettings> = {}): WarmupPlanSettings => ({
  dailyLimit: 40,
  increasePerDay: 3,
  windowFrom: '00:00',
  windowTo: '24:00',
  weekdaysOnly: false,
  timezone: 'UTC',
  startedAt: new Date('2026-11-23T10:00:00Z'),
  ...over,
});

describe('warm-up ramp', () => {
  it('sends increasePerDay on day 1 and increasePerDay more each local day, up to dailyLimit', () => {
    expect(rampTarget(plan(), new Date('2026-11-23T23:59:00Z'))).toBe(3);
    expect(rampTarget(plan(), new Date('2026-11-24T00:00:00Z'))).toBe(6);
    expect(rampTarget(plan(), new Date('2026-12-05T12:00:00Z'))).toBe(39);
    expect(rampTarget(plan(), new Date('2026-12-06T12:00:00Z'))).toBe(40);
    expect(rampTarget(plan(), new Date('2027-03-01T12:00:00Z'))).toBe(40);
  });

  it('counts days in the workspace time zone', () => {
    // 23:30 UTC on the 23rd is already the 24th in Tokyo: day 2 there.
    expect(
      rampTarget(
        plan({ timezone: 'Asia/Tokyo', startedAt: new Date('2026-11-23T01:00:00Z') }),
        new Date('2026-11-23T23:30:00Z'),
      ),
    ).toBe(6);
  });
});

describe('warm-up window', () => {
  it('opens at windowFrom in the zone and skips weekends with weekdaysOnly', () => {
    const p = plan({ windowFrom: '09:00', windowTo: '17:00', weekdaysOnly: true, timezone: 'Europe/Berlin' });
    // Friday 2026-11-27 18:00 Berlin (17:00Z): closed; next is Monday 09:00 Berlin (08:00Z).
    expect(windowOpensAt(p, new Date('2026-11-27T17:00:00Z')).toISOString()).toBe('2026-11-30T08:00:00.000Z');
    const inside = new Date('2026-11-30T10:00:00Z');
    expect(windowOpensAt(p, inside)).toEqual(inside);
    expect(windowOpensAt(plan(), inside)).toEqual(inside);
  });

  it('spreads what is left of the window over the emails left, at random gaps of at least a minute', () => {
    const p = plan({ windowFrom: '08:00', windowTo: '18:00' });
    const now = new Date('2026-11-23T08:00:00Z');
    // 10 hours left, 9 emails to go: 1 hour on average, 0.5x to 1.5x.
    expect(nextGapMs(p, now, 9, 0)).toBe(30 * 60_000);
    expect(nextGapMs(p, now, 9, 1)).toBe(90 * 60_000);
    expect(nextGapMs(p, new Date('2026-11-23T17:59:30Z'), 5, 0)).toBe(60_000);
  });
});

describe('warm-up health', () => {
  it('is inbox / (inbox + spam) with the label, unknown without data', () => {
    expect(healthOf(0, 0)).toEqual({ score: null, label: 'unknown' });
    expect(healthOf(19, 1)).toEqual({ score: 95, label: 'excellent' });
    expect(healthOf(9, 1)).toEqual({ score: 90, label: 'good' });
    expect(healthOf(3, 1)).toEqual({ score: 75, label: 'fair' });
    expect(healthOf(1, 2)).toEqual({ score: 33.33, label: 'poor' });
  });
});

describe('warm-up content', () => {
  const key = Buffer.alloc(32, 7);

  it('carries a marker only the key reproduces, different for every message', () => {
    const a = firstMessage(key, 'a@x.test', null);
    expect(hasMarker(key, 'a@x.test', a.text)).toBe(true);
    expect(hasMarker(Buffer.alloc(32, 8), 'a@x.test', a.text)).toBe(false);
    expect(markerCode(key, 'a@x.test')).not.toBe(markerCode(key, 'b@x.test'));
    expect(markerCode(key, 'a@x.test')).toMatch(/^[A-Z2-9]{10}$/);
    expect(hasMarker(key, 'r@x.test', replyMessage(key, 'r@x.test').text)).toBe(true);
  });

  it('never repeats the previous subject and varies over many messages', () => {
    const subjects = new Set<string>();
    let previous: string | null = null;
    for (let i = 0; i < 200; i += 1) {
      const m = firstMessage(key, `${i}@x.test`, previous);
      expect(m.subject).not.toBe(previous);
      expect(m.text.length).toBeGreaterThan(40);
      if (m.html) expect(m.html).toMatch(/^<div><p>/);
      subjects.add(m.subject);
      previous = m.subject;
    }
    expect(subjects.size).toBeGreaterThan(150);
  });

  it("finds a message's Message-ID in its first bytes, folded or not, and none in garbage", () => {
    expect(headerMessageId(Buffer.from('Subject: x\r\nMessage-ID:\r\n <abc@d.test>\r\n\r\nbody'))).toBe('abc@d.test');
    expect(headerMessageId(Buffer.from('message-id: <q@r>\n\nMessage-ID: <not@body>'))).toBe('q@r');
    expect(headerMessageId(Buffer.from('\u0000\u0001 nothing'))).toBeNull();
  });
});
