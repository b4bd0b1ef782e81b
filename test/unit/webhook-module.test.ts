/**
 * The webhook module built on its own (createWebhookModule) with fakes of what it asks of others: the
 * campaign module (does a filter's campaign exist) and the audit trail (written in the change's own
 * transaction). Its rules for a subscription run against its own store, with no other module behind them.
 */
import { expect } from '@jest/globals';
import type { Executor } from '../../server/db';
import { DomainError, notFound } from '../../server/platform/errors';
import { newId } from '../../server/platform/ids';
import { createWebhookModule } from '../../server/modules/webhooks';
import { WebhookStore } from '../../server/modules/webhooks/store';
import { SecretBox } from '../../server/platform/secrets';
import { bareWorkspace } from '../helpers/bare-workspace';
import { TestClock } from '../helpers/clock';
import { migratedDatabase } from '../helpers/server';

type Database = Awaited<ReturnType<typeof migratedDatabase>>;

describe('the webhook module with fakes of its neighbours', () => {
  let database: Database;
  const clock = new TestClock('2026-12-01T09:00:00Z');
  let workspaceId: string;
  const audited: { workspaceId: string; targetIds: string[] }[] = [];
  let auditFails = false;
  let webhooks: ReturnType<typeof createWebhookModule>;
  const input = { url: 'https://93.184.215.14/hooks', eventTypes: ['email.sent' as const] };
  const stored = async () =>
    Number((await database.db('webhook_subscriptions').where({ workspace_id: workspaceId }).count({ n: '*' }))[0].n);

  beforeAll(async () => {
    database = await migratedDatabase();
    workspaceId = await bareWorkspace(database.db, clock.now());
    webhooks = createWebhookModule({
      db: database.db,
      store: new WebhookStore(),
      secrets: new SecretBox({ secretKey: 'ab'.repeat(32), databaseUrl: undefined, dataDir: '' }),
      campaigns: { get: () => Promise.reject(notFound('Campaign not found.')) },
      config: { allowPrivateWebhooks: false },
      clock,
      audit: {
        recordChange: (_trx: Executor, ws: string, change: { targetIds: string[] }) => {
          if (auditFails) return Promise.reject(new Error('audit store refused'));
          audited.push({ workspaceId: ws, targetIds: change.targetIds });
          return Promise.resolve();
        },
      },
    });
  });
  afterAll(() => database?.close());

  const failure = (work: Promise<unknown>) =>
    work.then(
      () => null,
      (e: unknown) => e as DomainError,
    );

  it('refuses plain http and private destinations naming the field, storing nothing', async () => {
    const http = await failure(webhooks.create(workspaceId, { ...input, url: 'http://93.184.215.14/hooks' }));
    expect([http?.kind, http?.details[0].code]).toEqual(['invalid', 'https_required']);
    const loopback = await failure(webhooks.create(workspaceId, { ...input, url: 'https://127.0.0.1/hooks' }));
    expect([loopback?.kind, loopback?.details[0].code]).toEqual(['invalid', 'private_destination']);
    expect(await stored()).toBe(0);
    expect(audited).toEqual([]);
  });

  it('answers a filter on a campaign the campaign module does not know as not found', async () => {
    const err = await failure(webhooks.create(workspaceId, { ...input, campaignId: newId() }));
    expect(err?.kind).toBe('notFound');
    expect(await stored()).toBe(0);
  });

  it('writes the subscription and its audit entry in one transaction: no entry, no subscription', async () => {
    auditFails = true;
    await expect(webhooks.create(workspaceId, input)).rejects.toThrow('audit store refused');
    expect(await stored()).toBe(0);
    auditFails = false;
    const { subscription, secret } = await webhooks.create(workspaceId, input);
    expect(secret).toMatch(/^whsec_/);
    expect(audited).toEqual([{ workspaceId, targetIds: [subscription.id] }]);
    expect(await stored()).toBe(1);
  });
});
