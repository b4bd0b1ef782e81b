/**
 * Numbers JSON.parse would silently change: integers beyond ±2^53 (9223372036854775808 becomes
 * 9223372036854776000) and values outside the double range (1e400 becomes Infinity, 1e-400 becomes 0).
 * express.json's `verify` hook sees the raw body; one linear scan over its number tokens (strings skipped)
 * rejects them with a 400 instead of storing a different number.
 */
export class UnsafeNumberError extends Error {
  readonly status = 400;
  readonly type = 'entity.number.unsafe';
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?/y;

function unsafe(token: string): boolean {
  const value = Number(token);
  if (!Number.isFinite(value)) return true;
  if (value === 0) return /[1-9]/.test(token.replace(/[eE].*$/, '')); // a non-zero mantissa that underflowed
  return /^-?\d+$/.test(token) && !Number.isSafeInteger(value);
}

export function rejectUnsafeNumbers(_req: unknown, _res: unknown, buf: Buffer): void {
  const text = buf.toString('utf8');
  for (let i = 0; i < text.length;) {
    const c = text.charCodeAt(i);
    if (c === 34 /* " */) {
      // Skip the string, escapes included.
      i += 1;
      while (i < text.length && text.charCodeAt(i) !== 34) i += text.charCodeAt(i) === 92 /* \\ */ ? 2 : 1;
      i += 1;
    } else if (c === 45 /* - */ || (c >= 48 && c <= 57)) {
      NUMBER.lastIndex = i;
      const m = NUMBER.exec(text);
      if (!m) return; // not JSON: the parser answers it
      if (unsafe(m[0]))
        throw new UnsafeNumberError(
          `The number ${m[0].slice(0, 40)} cannot be represented exactly: send it as a string, or a value within ±9007199254740991 and the double range.`,
        );
      i += m[0].length;
    } else i += 1;
  }
}
