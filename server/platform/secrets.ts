/**
 * The server's secret key and what derives from it: encryption at rest of email-account passwords,
 * webhook signing secrets and stored idempotent answers (AES-256-GCM, node:crypto, a fresh 12-byte IV
 * per value, the row id + field as additional authenticated data so a ciphertext copied to another
 * row or field does not decrypt; stored as `v1.<iv>.<tag>.<ciphertext>` in base64url), and the key
 * that signs the links in emails (derived with HKDF). Platform code: several modules use it.
 *
 * The key: SECRET_KEY (32 bytes, hex or base64). Without it, the embedded database (no
 * DATABASE_URL) gets a key generated once and kept in DATA_DIR/secret.key (mode 0600), next to the
 * data it protects, so `npm start` works on a fresh clone. With PostgreSQL the key must be given:
 * a generated file would be lost with the container while the database lives on, making every
 * stored secret unreadable. The key is resolved on first use, so a server that never stores a secret
 * never needs one.
 */
import { createCipheriv, createDecipheriv, randomBytes, hkdfSync } from 'node:crypto';
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from './config';
import { conflict } from './errors';

const ALGORITHM = 'aes-256-gcm';
const FORMAT = 'v1';
const SET_IT = 'Set SECRET_KEY (32 bytes, hex or base64) and restart the server.';

/** Each feature that needs the key, with what its caller hears when the server has none (a 409). */
const WITHOUT_KEY = {
  emailAccounts: 'Email accounts cannot be connected: the server has no encryption key for their passwords.',
  webhooks: 'Webhooks cannot be created: the server has no encryption key for their signing secrets.',
  emailLinks: 'Unsubscribe, open and click links cannot be signed or checked: the server has no key to sign them.',
  warmup: 'Warm-up cannot run: the server has no key to sign its marker or encrypt pool mailbox passwords.',
} as const;
export type KeyedFeature = keyof typeof WITHOUT_KEY;

/** Whether a key exists or can be made: SECRET_KEY is set, or the embedded database keeps one in DATA_DIR. */
export const hasSecretKey = (config: Pick<Config, 'secretKey' | 'databaseUrl'>): boolean =>
  Boolean(config.secretKey || !config.databaseUrl);

/** The start-up log line for PostgreSQL without SECRET_KEY, naming what will not work; null when there is a key. */
export function missingSecretKeyWarning(config: Pick<Config, 'secretKey' | 'databaseUrl'>): string | null {
  if (hasSecretKey(config)) return null;
  return (
    'SECRET_KEY is not set: email accounts cannot be connected, webhooks cannot be created, unsubscribe, open and ' +
    'click links cannot be signed, warm-up cannot run, and idempotent answers are stored unencrypted. ' +
    SET_IT
  );
}

/** Parses a 32-byte key given as 64 hex characters or base64; throws a message naming SECRET_KEY. */
export function parseSecretKey(raw: string): Buffer {
  const text = raw.trim();
  const key = /^[0-9a-fA-F]{64}$/.test(text) ? Buffer.from(text, 'hex') : Buffer.from(text, 'base64');
  if (key.length !== 32) {
    throw new Error('SECRET_KEY must be 32 bytes, as 64 hex characters or base64 (e.g. `openssl rand -hex 32`).');
  }
  return key;
}

function readOrCreateKeyFile(dataDir: string): Buffer {
  const file = join(dataDir, 'secret.key');
  mkdirSync(dataDir, { recursive: true });
  try {
    // 'wx' fails when the file exists, so two processes never write different keys.
    writeFileSync(file, randomBytes(32).toString('hex') + '\n', { flag: 'wx', mode: 0o600 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  return parseSecretKey(readFileSync(file, 'utf8'));
}

export class SecretBox {
  private key: Buffer | undefined;

  constructor(private readonly config: Pick<Config, 'secretKey' | 'databaseUrl' | 'dataDir'>) {
    // A malformed SECRET_KEY is a configuration error: fail at start-up, not on the first connect.
    if (config.secretKey) this.key = parseSecretKey(config.secretKey);
  }

  /** True when a key is set or can be made (see hasSecretKey). */
  get available(): boolean {
    return hasSecretKey(this.config);
  }

  /** The key; without one on PostgreSQL, a 409 naming the feature that needed it. */
  private resolveKey(feature?: KeyedFeature): Buffer {
    if (this.key) return this.key;
    if (this.config.databaseUrl)
      throw conflict(
        `${feature ? WITHOUT_KEY[feature] : 'The server has no encryption key for its stored secrets.'} ${SET_IT}`,
      );
    this.key = readOrCreateKeyFile(this.config.dataDir);
    return this.key;
  }

  /** Throws the feature's 409 when no key is available; call before doing anything else. */
  ensureKey(feature: KeyedFeature): void {
    this.resolveKey(feature);
  }

  /** A key for another purpose (signing public links), derived so the stored key itself never leaves here. */
  deriveKey(purpose: string, feature: KeyedFeature): Buffer {
    return Buffer.from(hkdfSync('sha256', this.resolveKey(feature), Buffer.alloc(0), purpose, 32));
  }

  /** Callers check ensureKey(feature) first, so a missing key has been reported by feature before here. */
  encrypt(plaintext: string, context: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv(ALGORITHM, this.resolveKey(), iv);
    cipher.setAAD(Buffer.from(context));
    const data = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return [FORMAT, iv, cipher.getAuthTag(), data]
      .map((p) => (typeof p === 'string' ? p : p.toString('base64url')))
      .join('.');
  }

  /** For the sender: the password stored for `context`. Throws when the value was tampered with. */
  decrypt(stored: string, context: string): string {
    const [format, iv, tag, data] = stored.split('.');
    if (format !== FORMAT || !iv || !tag || data === undefined) throw new Error('Unknown secret format.');
    const decipher = createDecipheriv(ALGORITHM, this.resolveKey(), Buffer.from(iv, 'base64url'));
    decipher.setAAD(Buffer.from(context));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString('utf8');
  }
}
