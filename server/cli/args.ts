/**
 * What the admin commands accept, checked as the arguments are read: a bad one is a one-line error naming it
 * (commander's `option '--workspace <id>' argument 'nope' is invalid. ...`), before any database is opened.
 */
import { statSync } from 'node:fs';
import { InvalidArgumentError } from 'commander';
import { isValidEmail } from '../platform/email-address';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
// C0 and C1 control characters (tab and newline included): a name is one printable line.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** An id printed by another command (`workspace list`, `key create`, ...). */
export const id =
  (what: string) =>
  (value: string): string => {
    if (!UUID.test(value)) throw new InvalidArgumentError(`expected ${what} id (a UUID)`);
    return value.toLowerCase();
  };

/** A display name: one printable line of 1-200 characters (the API's bound on a workspace name). */
export function displayName(value: string): string {
  const name = value.trim();
  if (!name) throw new InvalidArgumentError('the name must not be empty');
  if (CONTROL.test(name)) throw new InvalidArgumentError('the name must not contain control characters');
  if (name.length > 200) throw new InvalidArgumentError('the name must be at most 200 characters');
  return name;
}

export function email(value: string): string {
  if (!isValidEmail(value.trim())) throw new InvalidArgumentError('expected an email address (name@example.com)');
  return value.trim();
}

/** A host name or IP address; whether it may be connected to is the outbound rule's, asked by the command. */
export function host(value: string): string {
  const bare = value.trim().replace(/^\[(.*)\]$/, '$1');
  if (!/^[a-z0-9.:-]{1,253}$/i.test(bare)) throw new InvalidArgumentError('expected a host name or IP address');
  return bare;
}

export function port(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 65535) throw new InvalidArgumentError('expected a port number (1-65535)');
  return n;
}

/**
 * A whole number from `min` to `max`, written in decimal digits (`_` may group them: `10_000`): no sign, exponent,
 * hex or fraction, so what the operator typed is the number used, never a rounded or reinterpreted one.
 */
export const wholeNumber =
  (min: number, max: number) =>
  (value: string): number => {
    const n = /^\d+(_\d+)*$/.test(value) ? Number(value.replace(/_/g, '')) : NaN;
    if (!Number.isSafeInteger(n) || n < min || n > max) {
      throw new InvalidArgumentError(`expected a whole number from ${min} to ${max.toLocaleString('en-US')}`);
    }
    return n;
  };

/** A file that can be read: a folder or a missing path is named here, not met as a stack trace later. */
export function csvFile(value: string): string {
  let stat;
  try {
    stat = statSync(value);
  } catch {
    throw new InvalidArgumentError('no such file');
  }
  if (stat.isDirectory()) throw new InvalidArgumentError('is a folder; expected a CSV file');
  if (!stat.isFile()) throw new InvalidArgumentError('expected a CSV file');
  return value;
}

/** Rows as a plain text table for people (`--json` gives the rows to scripts). */
export function table(rows: Record<string, string | number | boolean | null>[]): string {
  const columns = Object.keys(rows[0] ?? {});
  const cell = (v: string | number | boolean | null) => (v === null ? '-' : String(v));
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c]).length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]))
      .join('  ')
      .trimEnd();
  return [
    line(columns),
    line(widths.map((w) => '-'.repeat(w))),
    ...rows.map((r) => line(columns.map((c) => cell(r[c])))),
  ].join('\n');
}
