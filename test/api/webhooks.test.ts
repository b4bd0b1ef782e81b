/**
 * Webhooks through HTTP with a receiver on loopback: subscriptions, signed deliveries checked by an
 * independent HMAC, retries over moved time, 410, disable and resume, the outbox in the change's
 * transaction, private destinations, isolation, the delivery log and the client's verifier.
 */
import { expect } from '@jest/globals';
import type { Event } from '../../server/modules/events/service';
import { createHmac } from 'node:crypto';
import { verifyWebhook } from '../../client/webhooks';
import { startTestServer, type TestServer, type TestWorkspace } from '../helpers/server';
import { SecretBox } from '../../server/platform/secrets';
import { WebhookService } from '../../server/modules/webhooks/service';
import { WebhookStore } from '../../server/modules/webhooks/store';
import { startWebhookReceiver, type ReceivedHook, type WebhookReceiver } from '../helpers/webhook-receiver';

/** Standard Webhooks by hand: base64 HMAC-SHA256 of `id.timestamp.body` under the base64 secret after `whsec_`. */
function independentlyVerified(hook: ReceivedHook, secret: string): boolean {
  const id = hook.headers['webhook-id'] as string;
  const timestamp = hook.headers['webhook-timestamp'] as string;
  const expected = createHmac('sha256', Buffer.from(secret.slice('whsec_'.length), 'base64'))
    .update(`${id}.${timestamp}.${hook.body}`)
    .digest('base64');
  return (hook.headers['webhook-signature'] as string).split(' ').includes(`v1,${expected}`);
}

describe('webhooks', () => {
  let t: TestServer;
  let receiver: WebhookReceiver;
  let ws: TestWorkspace;

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    t = await startTestServer({ config: { secretKey: '88'.repeat(32), allowPrivateWebhooks: true } });
    ws = await t.createWorkspace();
  });
  afterAll(async () => {
    await t.close();
    await receiver.close();
  });
  beforeEach(() => {
    receiver.received.length = 0;
    receiver.status = 200;
  });

  // The retry schedule's jitter is random; these tests move time past its upper bound.
  const run = () => t.services.webhooks.runOnce();
  const subscribe = async (eventTypes: string[], extra: Record<string, unknown> = {}) => {
    const res = await ws.client.POST('/v2/webhook/create', {
      body: { url: receiver.url, eventTypes, ...extra } as never,
    });
    expect(res.response.status).toBe(201);
    return res.data!.data as { subscription: { id: string }; secret: string };
  };
  const campaign = async (name: string) =>
    (await ws.client.POST('/v2/campaign/create', { body: { name } })).data!.data.campaign;
  // Events of pausing: campaigns are made active directly (launch readiness is not what is tested here).
  const launchable = campaign;

  it('delivers a committed event signed, verifiable independently and by the client helper, with a stable id', async () => {
    // The client helper checks the timestamp against its own clock (5 minutes), so sign at the real time.
    t.clock.set(new Date());
    const { subscription, secret } = await subscribe(['contact.leadStatusChanged']);
    expect(secret).toMatch(/^whsec_/);
    const c = await campaign('Hooks');
    const added = await ws.client.POST('/v1/contact/add', {
      body: { campaignId: c.id, contacts: [{ email: 'lead@acme.test' }] },
    });
    const contactId = added.data!.data.added[0].id;
    await ws.client.POST('/v1/contact/update/status', { body: { contactId, leadStatus: 'interested' } as never });
    expect(await run()).toBe(1);
    expect(receiver.received).toHaveLength(1);
    const hook = receiver.received[0];
    expect(independentlyVerified(hook, secret)).toBe(true);
    const event = verifyWebhook(hook.body, hook.headers, secret);
    expect(event).toMatchObject({
      type: 'contact.leadStatusChanged',
      workspaceId: ws.workspaceId,
      data: { contactId, email: 'lead@acme.test', previous: null, leadStatus: 'interested' },
    });
    expect(hook.headers['webhook-id']).toBe(event.id);
    expect(() => verifyWebhook(hook.body.replace('interested', 'lost'), hook.headers, secret)).toThrow();

    const log = await ws.client.GET('/v2/webhook/deliveries', { params: { query: { id: subscription.id } } });
    expect(log.data!.data.items).toEqual([
      expect.objectContaining({
        eventId: event.id,
        attempt: 1,
        statusCode: 200,
        deliveryStatus: 'delivered',
        responseExcerpt: 'ok',
      }),
    ]);
    await ws.client.POST('/v2/webhook/delete', { body: { id: subscription.id } });
  });

  it('retries with backoff, keeps the same webhook-id, truncates what it keeps of the answer, and delivers once the receiver recovers', async () => {
    const { subscription } = await subscribe(['campaign.paused']);
    receiver.status = 500;
    const c = await launchable('Retry');
    await t.db('campaigns').where({ id: c.id }).update({ status: 'active' });
    await ws.client.POST('/v2/campaign/pause', { body: { campaignId: c.id } });
    expect(await run()).toBe(1);
    expect(await run()).toBe(0); // not due yet: about 5 s later
    t.clock.advance(6_000);
    expect(await run()).toBe(1);
    t.clock.advance(4 * 60_000);
    expect(await run()).toBe(0); // the next wait is about 5 minutes
    receiver.status = 200;
    t.clock.advance(2 * 60_000);
    expect(await run()).toBe(1);
    expect(new Set(receiver.received.map((h) => h.headers['webhook-id'])).size).toBe(1);
    const log = (await ws.client.GET('/v2/webhook/deliveries', { params: { query: { id: subscription.id } } })).data!
      .data.items;
    expect(log.map((a) => [a.attempt, a.statusCode, a.deliveryStatus])).toEqual([
      [3, 200, 'delivered'],
      [2, 500, 'delivered'],
      [1, 500, 'delivered'],
    ]);
    expect(log[1].responseExcerpt!.length).toBe(1000);
    await ws.client.POST('/v2/webhook/delete', { body: { id: subscription.id } });
  });

  it('disables a subscription at a 410, queues meanwhile, and delivers what waited on resume', async () => {
    const { subscription } = await subscribe(['campaign.paused']);
    receiver.status = 410;
    const first = await launchable('Gone');
    await t.db('campaigns').where({ id: first.id }).update({ status: 'active' });
    await ws.client.POST('/v2/campaign/pause', { body: { campaignId: first.id } });
    await run();
    const got = await ws.client.GET('/v2/webhook/get', { params: { query: { id: subscription.id } } });
    expect(got.data!.data.subscription).toMatchObject({
      status: 'disabled',
      disabledReason: 'The endpoint answered 410 Gone.',
    });
    const second = await launchable('Waits');
    await t.db('campaigns').where({ id: second.id }).update({ status: 'active' });
    await ws.client.POST('/v2/campaign/pause', { body: { campaignId: second.id } });
    receiver.received.length = 0;
    expect(await run()).toBe(0);
    receiver.status = 200;
    const resumed = await ws.client.POST('/v2/webhook/resume', { body: { id: subscription.id } });
    expect(resumed.data!.data.subscription.status).toBe('active');
    expect(await run()).toBe(2);
    expect(receiver.received.map((h) => (JSON.parse(h.body) as Event).data.campaignId).sort()).toEqual(
      [first.id, second.id].sort(),
    );
    await ws.client.POST('/v2/webhook/delete', { body: { id: subscription.id } });
  });

  it('disables a subscription whose endpoint fails for about three days', async () => {
    const { subscription } = await subscribe(['campaign.paused']);
    receiver.status = 503;
    const c = await launchable('Down');
    await t.db('campaigns').where({ id: c.id }).update({ status: 'active' });
    await ws.client.POST('/v2/campaign/pause', { body: { campaignId: c.id } });
    for (let i = 0; i < 8; i += 1) {
      expect(await run()).toBe(1);
      t.clock.advance(11 * 3600_000);
    }
    expect(await run()).toBe(0);
    expect(receiver.received).toHaveLength(8);
    const got = (await ws.client.GET('/v2/webhook/get', { params: { query: { id: subscription.id } } })).data!.data
      .subscription;
    expect(got.status).toBe('disabled');
    expect(got.disabledReason).toMatch(/three days \(last: HTTP 503\)/);
    await ws.client.POST('/v2/webhook/delete', { body: { id: subscription.id } });
  });

  it('writes an outbox row for a committed event and none for a rolled-back one', async () => {
    const { subscription } = await subscribe(['email.sent']);
    await t.db.transaction((trx) =>
      t.services.events.record(trx, {
        workspaceId: ws.workspaceId,
        type: 'email.sent',
        data: { email: 'a@b.test' },
        mail: {},
      }),
    );
    await expect(
      t.db.transaction(async (trx) => {
        await t.services.events.record(trx, {
          workspaceId: ws.workspaceId,
          type: 'email.sent',
          data: { email: 'rolled@b.test' },
          mail: {},
        });
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    const rows = await t
      .db('webhook_deliveries')
      .where({ subscription_id: subscription.id })
      .select<{ payload: string }[]>('payload');
    expect(rows.map((r) => (JSON.parse(r.payload) as Event).data.email)).toEqual(['a@b.test']);
    await ws.client.POST('/v2/webhook/delete', { body: { id: subscription.id } });
  });

  it('only sends the subscribed campaign’s events when filtered, and rotates the secret', async () => {
    const wanted = await launchable('Wanted');
    const other = await launchable('Other');
    const { subscription, secret } = await subscribe(['campaign.paused'], { campaignId: wanted.id });
    for (const c of [wanted, other]) {
      await t.db('campaigns').where({ id: c.id }).update({ status: 'active' });
      await ws.client.POST('/v2/campaign/pause', { body: { campaignId: c.id } });
    }
    expect(await run()).toBe(1);
    expect((JSON.parse(receiver.received[0].body) as Event).data.campaignId).toBe(wanted.id);
    const rotated = await ws.client.POST('/v2/webhook/rotate-secret', { body: { id: subscription.id } });
    const newSecret = rotated.data!.data.secret;
    expect(newSecret).not.toBe(secret);
    const test = await ws.client.POST('/v2/webhook/test', { body: { id: subscription.id } });
    expect(test.data!.data).toMatchObject({ statusCode: 200, delivered: true });
    const last = receiver.received[receiver.received.length - 1];
    expect(independentlyVerified(last, newSecret)).toBe(true);
    expect(independentlyVerified(last, secret)).toBe(false);
    await ws.client.POST('/v2/webhook/delete', { body: { id: subscription.id } });
  });

  it('refuses private destinations and plain http unless allowed, and keeps subscriptions to their workspace', async () => {
    const strict = await startTestServer({ config: { secretKey: '88'.repeat(32), allowPrivateWebhooks: false } });
    try {
      const w = await strict.createWorkspace();
      const privateUrl = await w.client.POST('/v2/webhook/create', {
        body: { url: 'https://127.0.0.1:9/hooks', eventTypes: ['email.sent'] },
      });
      expect(privateUrl.response.status).toBe(400);
      expect((privateUrl.error as { details: { code: string }[] }).details[0].code).toBe('private_destination');
      const plain = await w.client.POST('/v2/webhook/create', {
        body: { url: 'http://hooks.example.com/x', eventTypes: ['email.sent'] },
      });
      expect(plain.response.status).toBe(400);
    } finally {
      await strict.close();
    }
    const { subscription } = await subscribe(['email.sent']);
    const intruder = await t.createWorkspace();
    for (const res of [
      await intruder.client.GET('/v2/webhook/get', { params: { query: { id: subscription.id } } }),
      await intruder.client.POST('/v2/webhook/delete', { body: { id: subscription.id } }),
      await intruder.client.GET('/v2/webhook/deliveries', { params: { query: { id: subscription.id } } }),
    ]) {
      expect(res.response.status).toBe(404);
    }
    expect((await intruder.client.GET('/v2/webhook/list', {})).data!.data.items).toEqual([]);
    await ws.client.POST('/v2/webhook/delete', { body: { id: subscription.id } });
  });

  it('answers a create on PostgreSQL without SECRET_KEY with a 409 that names webhooks, storing nothing', async () => {
    const { db, clock, config } = t.deps;
    const noKey = new SecretBox({ secretKey: undefined, databaseUrl: 'postgres://db.internal/outreach', dataDir: '' });
    const webhooks = new WebhookService({
      db,
      store: new WebhookStore(),
      secrets: noKey,
      campaigns: t.services.campaigns,
      config,
      clock,
      audit: t.services.audit,
    });
    const w = await t.createWorkspace();
    await expect(
      webhooks.create(w.workspaceId, { url: 'https://hooks.example.com/x', eventTypes: ['email.sent'] }),
    ).rejects.toMatchObject({
      kind: 'conflict',
      message: expect.stringMatching(/^Webhooks cannot be created: the server has no encryption key/),
    });
    expect(await t.db('webhook_subscriptions').where({ workspace_id: w.workspaceId })).toEqual([]);
  });
});
