/** Contacts still to be mailed by their campaign; every other status is final. */
export const UNFINISHED_STATUSES = ['active', 'paused'] as const;
