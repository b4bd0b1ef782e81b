/** The inbox reader as a worker job (`server/worker.ts` runs registered jobs; the composition root registers this one). */
import type { InboxService } from './service';

export const inboxJob = (inbox: InboxService) => ({ name: 'inbox', runOnce: () => inbox.runOnce() });
