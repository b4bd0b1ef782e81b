import type { Clock } from '../../server/platform/clock';

/** A clock tests move by hand. */
export class TestClock implements Clock {
  private current: number;
  constructor(start: Date | string = '2026-11-23T10:00:00.000Z') {
    this.current = new Date(start).getTime();
  }
  now(): Date {
    return new Date(this.current);
  }
  set(at: Date | string): void {
    this.current = new Date(at).getTime();
  }
  advance(ms: number): void {
    this.current += ms;
  }
}
