import { ok, route } from '../../http/route';
import type { components } from '../../../generated/api';
import type { ContactService } from './service';
import { addedMessage } from './service';
import type { ContactLifecycle } from './lifecycle';
import type { ContactListing } from './listing';
import type { ContactBulkRequest } from './bulk';
import { plural } from '../../text/plural';

/** A contact's progress through its campaign's steps: the sending module answers it (declared here so contact does not import sending). */
export interface ContactProgressSource {
  contactProgress(contactId: string): Promise<components['schemas']['ContactProgress'] | null>;
  recipientProvider(email: string): Promise<components['schemas']['MailboxProvider'] | null>;
}

/** Bulk actions run as jobs: the job module answers them (declared here so contact does not import job). */
export interface ContactBulkJobs {
  bulkContacts(workspaceId: string, request: ContactBulkRequest): Promise<components['schemas']['Job']>;
}

const BULK_VERBS: Record<ContactBulkRequest['action'], string> = {
  pause: 'Contact pause',
  resume: 'Contact resume',
  move: 'Contact move',
  delete: 'Contact delete',
  setLeadStatus: 'Lead status',
};

export const contactRoutes = ({
  contacts,
  sending,
  contactLifecycle,
  contactListing,
  jobs,
}: {
  contacts: ContactService;
  sending: ContactProgressSource;
  contactLifecycle: ContactLifecycle;
  contactListing: ContactListing;
  jobs: ContactBulkJobs;
}) => [
  route('post', '/v1/contact/add', async ({ auth, body }) => {
    const result = await contacts.add(auth.workspaceId, body.campaignId, body.contacts);
    return ok(addedMessage(result), result);
  }),
  route('get', '/v1/contact/get', async ({ auth, query }) => {
    const contact = await contacts.get(auth.workspaceId, query);
    return ok('Contact retrieved', {
      contact,
      progress: await sending.contactProgress(contact.id),
      recipientProvider: await sending.recipientProvider(contact.email),
    });
  }),
  route('post', '/v1/contact/delete', async ({ auth, body }) =>
    ok('Contact deleted', { contact: await contacts.delete(auth.workspaceId, body) }),
  ),
  route('post', '/v1/contact/update/status', async ({ auth, body }) =>
    ok('Lead status updated', { contact: await contacts.setLeadStatus(auth.workspaceId, body, body.leadStatus) }),
  ),
  route('post', '/v1/contact/data/update', async ({ auth, body }) =>
    ok('Custom variables updated', {
      contact: await contacts.mergeVariables(auth.workspaceId, body, body.customVariables),
    }),
  ),
  route('post', '/v1/contact/data/set', async ({ auth, body }) =>
    ok('Custom variables set', { contact: await contacts.setVariables(auth.workspaceId, body, body.customVariables) }),
  ),
  route('post', '/v1/contact/data/remove', async ({ auth, body }) => {
    const result = await contacts.removeVariables(auth.workspaceId, body, body.keys);
    return ok(
      `${result.removed.length} custom ${result.removed.length === 1 ? 'variable' : 'variables'} removed`,
      result,
    );
  }),
  route('post', '/v2/contact/pause', async ({ auth, body }) => {
    const result = await contactLifecycle.pause(auth.workspaceId, body);
    return ok(`${plural(result.changed.length, 'contact', 'contacts')} paused`, result);
  }),
  route('post', '/v2/contact/resume', async ({ auth, body }) => {
    const result = await contactLifecycle.resume(auth.workspaceId, body);
    return ok(`${plural(result.changed.length, 'contact', 'contacts')} resumed`, result);
  }),
  route('post', '/v2/contact/move', async ({ auth, body }) => {
    const result = await contactLifecycle.move(auth.workspaceId, body);
    return ok(
      `${plural(result.moved.length, 'contact', 'contacts')} moved, ${result.alreadyInTarget.length} already in the target campaign`,
      result,
    );
  }),
  route('get', '/v2/contact/list', async ({ auth, query }) => {
    const data = await contactListing.list(auth.workspaceId, query ?? {});
    return ok(plural(data.items.length, 'contact', 'contacts'), data);
  }),
  route(
    'post',
    '/v2/contact/bulk',
    async ({ auth, body }) => {
      const job = await jobs.bulkContacts(auth.workspaceId, body);
      return ok(`${BULK_VERBS[body.action]} job queued with ${plural(job.progress.total, 'row', 'rows')}`, { job });
    },
    { status: 202 },
  ),
];
