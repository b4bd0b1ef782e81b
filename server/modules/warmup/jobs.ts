/** What the sender and reader jobs share: their settings, and how a run works through its members side by side. */

export interface WarmupSettings {
  /** Members one run locks to send (and answers it claims). */
  sendBatch: number;
  /** Senders of a run delivering at once (each over its own pooled SMTP connections). */
  sendConcurrency: number;
  /** Mailboxes one run reads, and how many at once. */
  readBatch: number;
  readConcurrency: number;
  /** How often a mailbox is read. */
  readIntervalMs: number;
  /** Messages of one folder looked at per read (only their Message-ID header is fetched: a 20 MB message costs no more). */
  messagesPerRead: number;
  /** Answers go out between these many minutes after the reader saw the email. */
  replyDelayMinutes: [number, number];
  /** Share of read warm-up emails also flagged important, in percent. */
  flagPercent: number;
  /** Spam protection: at least this many placements seen in 7 days before it may pause. */
  spamMinSeen: number;
}

export const DEFAULT_WARMUP_SETTINGS: WarmupSettings = {
  // A whole tick's due senders in one run (500 accounts at 40 a day: ~140 every 10 minutes), sent side by side.
  sendBatch: 500,
  sendConcurrency: 100,
  readBatch: 50,
  readConcurrency: 8,
  readIntervalMs: 60_000,
  messagesPerRead: 500,
  replyDelayMinutes: [5, 45],
  flagPercent: 30,
  spamMinSeen: 10,
};

/** Runs `work` on every item, at most `limit` at a time. */
export async function eachAtOnce<T>(items: T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  const queue = [...items];
  const worker = async () => {
    for (let next = queue.shift(); next !== undefined; next = queue.shift()) await work(next);
  };
  await Promise.all(Array.from({ length: Math.min(limit, queue.length) }, worker));
}
