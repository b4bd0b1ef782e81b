import { createHash } from 'node:crypto';

/** Keys are stored as SHA-256 hashes: a look-up by hash does not depend on how much of a guessed key is right. */
export const hashKey = (key: string): string => createHash('sha256').update(key).digest('hex');
