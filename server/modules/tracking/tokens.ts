/**
 * Signed tokens for the links in emails: the payload travels in the URL (base64url JSON) with an
 * HMAC-SHA256 over it, so a public endpoint trusts only what this server signed, and a click target can
 * only be a URL that was in the email.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export class TokenSigner {
  constructor(private readonly key: () => Buffer) {}

  private mac(body: string): Buffer {
    return createHmac('sha256', this.key()).update(body).digest();
  }

  sign(payload: object): string {
    const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
    return `${body}.${this.mac(body).toString('base64url')}`;
  }

  /** The payload, or null for anything not signed here (malformed, tampered, another key). */
  verify<T>(token: string): T | null {
    const dot = token.indexOf('.');
    if (dot <= 0 || token.length > 4096) return null;
    const body = token.slice(0, dot);
    const given = Buffer.from(token.slice(dot + 1), 'base64url');
    const expected = this.mac(body);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
    try {
      return JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as T;
    } catch {
      return null;
    }
  }
}
