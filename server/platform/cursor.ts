/**
 * Keyset cursors of the list operations that page by (time, id): the unibox and list members. A cursor is
 * opaque to clients (base64url of `<ISO time>|<uuid>`) and names the last item of a page; the next page starts
 * strictly after it in the list's order.
 */
import { invalid, detail } from './errors';

export interface Position {
  at: Date;
  id: string;
}

export function encodeCursor(at: Date, id: string): string {
  return Buffer.from(`${new Date(at).toISOString()}|${id}`).toString('base64url');
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Only what encodeCursor writes: an ISO time that reads back the same, in years the database stores
 * (a date such as year -271821 is valid JavaScript but not a PostgreSQL timestamp), and a UUID; else invalid input
 * naming the query parameter `field`.
 */
export function decodeCursor(cursor: string, field = 'cursor'): Position {
  const parts = Buffer.from(cursor, 'base64url').toString('utf8').split('|');
  const [iso, id] = parts;
  const at = new Date(iso ?? '');
  const year = at.getUTCFullYear();
  if (
    parts.length !== 2 ||
    !UUID.test(id) ||
    Number.isNaN(year) ||
    year < 1970 ||
    year > 9999 ||
    at.toISOString() !== iso
  ) {
    throw invalid('The cursor is not one this API gave.', [
      detail(field, 'is not a cursor from a previous page', 'invalid', 'query'),
    ]);
  }
  return { at, id };
}
