/**
 * Mail events written through the events service's `record` (the one write path, which keeps the
 * analytics rollups), for tests that need events without sending real mail.
 */
import { ANALYTICS_NAME, type MailEventSubject, type MailEventType } from '../../server/modules/events/service';
import type { TestServer } from './server';

const EVENT_OF = Object.fromEntries(Object.entries(ANALYTICS_NAME).map(([event, name]) => [name, event])) as Record<
  string,
  MailEventType
>;

export interface MailEventInput extends MailEventSubject {
  /** The analytics name: sent, opened, clicked, replied, autoReplied, bounced, unsubscribed. */
  type: string;
  at: string | Date;
}

export async function recordMailEvents(t: TestServer, workspaceId: string, list: MailEventInput[]): Promise<void> {
  for (const { type, at, ...mail } of list) {
    await t.db.transaction((trx) =>
      t.services.events.record(trx, { workspaceId, type: EVENT_OF[type], occurredAt: new Date(at), data: {}, mail }),
    );
  }
}
