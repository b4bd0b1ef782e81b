/** While the quota refuses (a 429), the time left before the console asks again, as Retry-After said. */
import { useEffect, useState, useSyncExternalStore } from 'react';
import { cooldown } from '../api';

const subscribe = (listener: () => void) => {
  cooldown.listeners.add(listener);
  return () => cooldown.listeners.delete(listener);
};

export function QuotaBanner() {
  const until = useSyncExternalStore(subscribe, () => cooldown.until);
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (until <= Date.now()) return;
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, [until]);
  const seconds = Math.ceil((until - now) / 1000);
  if (seconds <= 0) return null;
  return (
    <p className="banner" role="status">
      The workspace&apos;s request quota is used up: the console asks again in {seconds} s.
    </p>
  );
}
