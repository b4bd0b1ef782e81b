import { v7 } from 'uuid';

/** Identifiers are time-ordered UUIDv7. */
export const newId = (): string => v7();
