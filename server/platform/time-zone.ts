/**
 * An IANA time zone name in its canonical spelling (`asia/tokyo` -> `Asia/Tokyo`), or null when it is none.
 * Intl also takes offsets such as "+05:00"; only names are accepted, since an offset has no daylight saving.
 */
export function canonicalTimeZone(name: string): string | null {
  if (!/^[A-Za-z]/.test(name)) return null;
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    return null;
  }
}
