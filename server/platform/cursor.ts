/**
 * Keyset cursors of the list operations: the unibox, list members, the credit ledger and contacts. A cursor is
 * opaque to clients (base64url of `<sort key>|<uuid>`) and names the last item of a page by its sort key (an ISO
 * time, or a text such as an address) and id; the next page starts strictly after it in the list's order.
 */
import { invalid, detail } from './errors';

export interface Position {
  at: Date;
  id: string;
}

/** A position by a text sort key. */
export interface KeyPosition {
  key: string;
  id: string;
}

export function encodeCursor(at: Date, id: string): string {
  return encodeKeyCursor(new Date(at).toISOString(), id);
}

export function encodeKeyCursor(key: string, id: string): string {
  return Buffer.from(`${key}|${id}`).toString('base64url');
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const notOurs = (field: string) =>
  invalid('The cursor is not one this API gave.', [
    detail(field, 'is not a cursor from a previous page', 'invalid', 'query'),
  ]);

/** What encodeKeyCursor writes (the key may hold `|`: the id is after the last one), else invalid input naming `field`. */
export function decodeKeyCursor(cursor: string, field = 'cursor'): KeyPosition {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const bar = text.lastIndexOf('|');
  const id = text.slice(bar + 1);
  if (bar < 0 || !UUID.test(id) || Buffer.from(text).toString('base64url') !== cursor) throw notOurs(field);
  return { key: text.slice(0, bar), id };
}

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
    throw notOurs(field);
  }
  return { at, id };
}
