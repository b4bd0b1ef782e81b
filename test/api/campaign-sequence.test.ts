import { expect } from '@jest/globals';
import { newId } from '../../server/platform/ids';
import type { VariantRow } from '../../server/modules/campaign/store';
import type { ErrorBody, Success } from '../helpers/bodies';
import { startTestServer, type TestServer, type TestWorkspace } from '../helpers/server';
import { createCampaign, opener, raw, readyCampaign } from './campaign-helpers';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.close());

const followUp = { subject: '', body: 'Bumping this, {{firstName | there}}.' };

async function withSteps(ws: TestWorkspace, steps: unknown[]) {
  const campaign = await createCampaign(ws);
  const res = await raw<Success<'/v2/campaign/sequence-create', 'post'>>(
    t,
    ws,
    'POST',
    '/v2/campaign/sequence-create',
    { campaignId: campaign.id, steps },
  );
  if (res.status !== 201) throw new Error(JSON.stringify(res.body));
  return { campaign, steps: res.body.data.steps };
}

const count = async (table: string, where: Record<string, string>) =>
  Number((await t.db(table).where(where).count({ n: '*' }))[0].n);

describe('POST /v2/campaign/sequence-create', () => {
  it('creates steps with lettered variants, even weights and parsed variables, and appends later ones', async () => {
    const ws = await t.createWorkspace();
    const campaign = await createCampaign(ws);
    const { data, response } = await ws.client.POST('/v2/campaign/sequence-create', {
      body: {
        campaignId: campaign.id,
        steps: [
          {
            delayDays: 0,
            variants: [
              opener,
              { subject: 'For {{ companyName }}', body: '{{jobTitle}} at {{companyName}}: {{plan-tier.name}}' },
              { subject: 'Hello', body: '<style>@media (x){.a{color:red}}</style> {{email}}' },
            ],
          },
          { delayDays: 3, variants: [followUp] },
        ],
      },
    });
    expect(response.status).toBe(201);
    expect(data!.message).toBe('Sequence steps created');
    const [first, second] = data!.data.steps;
    expect(data!.data.campaignId).toBe(campaign.id);
    expect(first).toMatchObject({ campaignId: campaign.id, order: 1, delayDays: 0 });
    expect(first.variants.map((v) => [v.label, v.weight, v.variables])).toEqual([
      ['A', 34, ['firstName', 'companyName']],
      ['B', 33, ['companyName', 'jobTitle', 'plan-tier.name']],
      ['C', 33, ['email']],
    ]);
    expect(first.variants[0]).toEqual({
      id: expect.any(String),
      label: 'A',
      subject: opener.subject,
      body: opener.body,
      weight: 34,
      variables: ['firstName', 'companyName'],
    });
    expect(second).toMatchObject({
      order: 2,
      delayDays: 3,
      variants: [{ label: 'A', subject: '', weight: 100, variables: ['firstName'] }],
    });

    const more = await ws.client.POST('/v2/campaign/sequence-create', {
      body: { campaignId: campaign.id, steps: [{ delayDays: 5, variants: [{ ...followUp, weight: 100 }] }] },
    });
    expect(more.data!.data.steps.map((s) => [s.order, s.delayDays])).toEqual([
      [1, 0],
      [2, 3],
      [3, 5],
    ]);
    const status = await ws.client.GET('/v1/campaign/list', {});
    expect(status.data!.data.items[0].counts.steps).toBe(3);
  });

  it('checks delays and first-step subjects, naming every field', async () => {
    const ws = await t.createWorkspace();
    const campaign = await createCampaign(ws);
    const res = await raw(t, ws, 'POST', '/v2/campaign/sequence-create', {
      campaignId: campaign.id,
      steps: [
        { delayDays: 2, variants: [opener, { subject: '', body: 'x' }] },
        { delayDays: 0, variants: [followUp] },
      ],
    });
    expect(res.status).toBe(400);
    expect(res.body.details.map((d) => [d.field, d.code])).toEqual([
      ['body.steps.0.delayDays', 'first_step_delay'],
      ['body.steps.0.variants.1.subject', 'subject_required'],
      ['body.steps.1.delayDays', 'delay'],
    ]);
    expect(res.body.error).toBe('body.steps.0.delayDays: must be 0 on the first step. (and 2 more problems)');
    const v1 = await raw(t, ws, 'POST', '/v2/campaign/sequence-create', {
      campaignId: campaign.id,
      steps: [{ delayDays: 0, variants: [followUp] }],
    });
    expect(v1.body.details[0].field).toBe('body.steps.0.variants.0.subject');
    expect(await count('campaign_steps', { campaign_id: campaign.id })).toBe(0);
  });

  it.each([
    ['Hi {{firstName', '"{{" at character 4 is never closed with "}}".'],
    ['Hi {{firstName} and {{lastName}}', '"{{" at character 4 is never closed with "}}".'],
    ['Hi {firstName}}', '"}}" at character 14 closes a single "{": write {{firstName}}.'],
    ['Hi {{ }}', 'Empty variable "{{ }}" at character 4.'],
    [
      'Hi {{first name}}',
      '"{{first name}}" at character 4: "first name" is not a variable name (letters, digits, _, - and ., starting with a letter or _).',
    ],
    ['Hi {{{firstName}}}', '"{{{" at character 4: variables use exactly two braces, {{name}}.'],
    ['Hi {{firstName | }}', '"{{firstName | }}" at character 4: the fallback after "|" is empty.'],
    ['Hi {{firstName | a | b}}', '"{{firstName | a | b}}" at character 4: a variable takes at most one "|" fallback.'],
  ])('rejects the malformed template %j with the field', async (body, message) => {
    const ws = await t.createWorkspace();
    const campaign = await createCampaign(ws);
    const res = await raw(t, ws, 'POST', '/v2/campaign/sequence-create', {
      campaignId: campaign.id,
      steps: [{ delayDays: 0, variants: [{ subject: 'Hi', body }] }],
    });
    expect(res.status).toBe(400);
    expect(res.body.details).toEqual([
      { field: 'body.steps.0.variants.0.body', location: 'body', message, code: 'template' },
    ]);
    expect(res.body.error).toBe(`body.steps.0.variants.0.body: ${message}`);
  });

  it('checks weights: all or none, adding up to 100', async () => {
    const ws = await t.createWorkspace();
    const campaign = await createCampaign(ws);
    const send = <T = ErrorBody>(variants: unknown[]) =>
      raw<T>(t, ws, 'POST', '/v2/campaign/sequence-create', {
        campaignId: campaign.id,
        steps: [{ delayDays: 0, variants }],
      });
    const some = await send([{ ...opener, weight: 60 }, opener]);
    expect(some.status).toBe(400);
    expect(some.body.details).toEqual([
      expect.objectContaining({ field: 'body.steps.0.variants.1.weight', code: 'weight_missing' }),
    ]);
    const wrongSum = await send([
      { ...opener, weight: 60 },
      { ...opener, weight: 30 },
    ]);
    expect(wrongSum.body.details).toEqual([
      {
        field: 'body.steps.0.variants',
        location: 'body',
        message: "the step's variant weights must add up to 100, not 90.",
        code: 'weight_sum',
      },
    ]);
    const ok = await send<Success<'/v2/campaign/sequence-create', 'post'>>([
      { ...opener, weight: 70 },
      { ...opener, weight: 30 },
    ]);
    expect(ok.status).toBe(201);
    expect(ok.body.data.steps[0].variants.map((v) => v.weight)).toEqual([70, 30]);
  });

  it('allows at most 20 steps', async () => {
    const ws = await t.createWorkspace();
    const steps = Array.from({ length: 19 }, (_, i) => ({ delayDays: i === 0 ? 0 : 1, variants: [opener] }));
    const { campaign } = await withSteps(ws, steps);
    const res = await raw(t, ws, 'POST', '/v2/campaign/sequence-create', {
      campaignId: campaign.id,
      steps: [
        { delayDays: 1, variants: [opener] },
        { delayDays: 1, variants: [opener] },
      ],
    });
    expect(res.status).toBe(400);
    expect(res.body.details).toEqual([expect.objectContaining({ field: 'body.steps', code: 'max_steps' })]);
    expect(await count('campaign_steps', { campaign_id: campaign.id })).toBe(19);
  });

  it('rolls everything back when the database fails half-way', async () => {
    const ws = await t.createWorkspace();
    const campaign = await createCampaign(ws);
    // A trigger makes the variant insert fail after the steps were inserted in the same transaction.
    await t.db.raw(`CREATE OR REPLACE FUNCTION campaign_test_explode() RETURNS trigger AS $$
      BEGIN IF NEW.body = 'EXPLODE' THEN RAISE EXCEPTION 'boom'; END IF; RETURN NEW; END $$ LANGUAGE plpgsql`);
    await t.db.raw(
      'CREATE TRIGGER campaign_test_explode BEFORE INSERT ON step_variants FOR EACH ROW EXECUTE FUNCTION campaign_test_explode()',
    );
    try {
      const res = await raw(t, ws, 'POST', '/v2/campaign/sequence-create', {
        campaignId: campaign.id,
        steps: [
          { delayDays: 0, variants: [opener] },
          { delayDays: 2, variants: [{ subject: 'x', body: 'EXPLODE' }] },
        ],
      });
      expect(res.status).toBe(500);
      expect(res.body).toMatchObject({ error: 'Internal server error.', code: 'internal_error' });
    } finally {
      await t.db.raw('DROP TRIGGER campaign_test_explode ON step_variants');
    }
    expect(await count('campaign_steps', { campaign_id: campaign.id })).toBe(0);
    expect(await count('step_variants', { campaign_id: campaign.id })).toBe(0);
    const after = await ws.client.GET('/v1/campaign/list', {});
    expect(after.data!.data.items[0]).toMatchObject({ counts: { steps: 0 }, updatedAt: campaign.updatedAt });
  });

  it('refuses to edit an active campaign and hides other workspaces', async () => {
    const ws = await t.createWorkspace();
    const other = await t.createWorkspace();
    const { campaign } = await readyCampaign(t, ws);
    await ws.client.POST('/v2/campaign/launch', { body: { campaignId: campaign.id } });
    const body = { campaignId: campaign.id, steps: [{ delayDays: 1, variants: [opener] }] };
    const active = await raw(t, ws, 'POST', '/v2/campaign/sequence-create', body);
    expect(active.status).toBe(409);
    expect(active.body).toMatchObject({
      error: 'Campaign is active: pause it before editing its sequence.',
      code: 'conflict',
    });
    const theirs = await raw(t, other, 'POST', '/v2/campaign/sequence-create', body);
    expect(theirs.status).toBe(404);
    expect(theirs.body.error).toBe('Campaign not found.');
    await ws.client.POST('/v2/campaign/pause', { body: { campaignId: campaign.id } });
    expect((await raw(t, ws, 'POST', '/v2/campaign/sequence-create', body)).status).toBe(201);
  });

  it('rejects schema violations with v2 details and is v2 only', async () => {
    const ws = await t.createWorkspace();
    const campaign = await createCampaign(ws);
    const res = await raw(t, ws, 'POST', '/v2/campaign/sequence-create', {
      campaignId: campaign.id,
      steps: [{ delayDays: 0, variants: [] }],
    });
    expect(res.status).toBe(400);
    expect(res.body.details).toEqual([expect.objectContaining({ field: 'body.steps.0.variants', code: 'minItems' })]);
    expect(
      (await raw(t, ws, 'POST', '/v1/campaign/sequence-create', { campaignId: campaign.id, steps: [] })).status,
    ).toBe(404);
  });
});

describe('PUT /v2/campaign/sequences/{id}', () => {
  it('changes the delay and some variants, keeping the rest', async () => {
    const ws = await t.createWorkspace();
    const { campaign, steps } = await withSteps(ws, [
      { delayDays: 0, variants: [opener, opener] },
      { delayDays: 2, variants: [followUp] },
    ]);
    const [a, b] = steps[0].variants;
    t.clock.advance(1000);
    const { data, response } = await ws.client.PUT('/v2/campaign/sequences/{id}', {
      params: { path: { id: steps[0].id } },
      body: {
        variants: [
          { id: a.id, weight: 30 },
          { id: b.id, weight: 70, subject: 'New {{jobTitle}}' },
        ],
      },
    });
    expect(response.status).toBe(200);
    expect(data!.message).toBe('Sequence step updated');
    expect(data!.data.step.variants).toEqual([
      {
        id: a.id,
        label: 'A',
        subject: opener.subject,
        body: opener.body,
        weight: 30,
        variables: ['firstName', 'companyName'],
      },
      {
        id: b.id,
        label: 'B',
        subject: 'New {{jobTitle}}',
        body: opener.body,
        weight: 70,
        variables: ['jobTitle', 'companyName'],
      },
    ]);
    const delay = await ws.client.PUT('/v2/campaign/sequences/{id}', {
      params: { path: { id: steps[1].id } },
      body: { delayDays: 4 },
    });
    expect(delay.data!.data.step).toMatchObject({ id: steps[1].id, order: 2, delayDays: 4 });
    const status = await ws.client.GET('/v1/campaign/list', {});
    expect(status.data!.data.items.find((c) => c.id === campaign.id)!.updatedAt).toBe(t.clock.now().toISOString());
  });

  it('checks the step rules after the change and changes nothing on error', async () => {
    const ws = await t.createWorkspace();
    const { steps } = await withSteps(ws, [
      { delayDays: 0, variants: [opener, opener] },
      { delayDays: 2, variants: [followUp] },
    ]);
    const [a, b] = steps[0].variants;
    const put = (id: string, body: unknown) => raw(t, ws, 'PUT', `/v2/campaign/sequences/${id}`, body);

    const sum = await put(steps[0].id, { variants: [{ id: a.id, weight: 90 }] });
    expect(sum.status).toBe(400);
    expect(sum.body.details).toEqual([
      expect.objectContaining({
        field: 'body.variants',
        code: 'weight_sum',
        message: "the step's variant weights must add up to 100, not 140.",
      }),
    ]);
    const first = await put(steps[0].id, {
      delayDays: 1,
      variants: [
        { id: b.id, subject: '' },
        { id: a.id, body: '{{oops' },
      ],
    });
    expect(first.body.details.map((d) => [d.field, d.code])).toEqual([
      ['body.delayDays', 'first_step_delay'],
      ['body.variants.0.subject', 'subject_required'],
      ['body.variants.1.body', 'template'],
    ]);
    const later = await put(steps[1].id, { delayDays: 0 });
    expect(later.body.details).toEqual([expect.objectContaining({ field: 'body.delayDays', code: 'delay' })]);
    const twice = await put(steps[0].id, {
      variants: [
        { id: a.id, weight: 50 },
        { id: a.id, weight: 50 },
      ],
    });
    expect(twice.status).toBe(400);
    expect(twice.body.details).toEqual([expect.objectContaining({ field: 'body.variants.1.id', code: 'duplicate' })]);
    const foreign = await put(steps[1].id, { variants: [{ id: a.id, body: 'x' }] });
    expect(foreign.status).toBe(404);
    expect(foreign.body.error).toBe(`Variant not found in this step: ${a.id}.`);
    expect(foreign.body.details).toEqual([expect.objectContaining({ field: 'body.variants.0.id', code: 'not_found' })]);
    const empty = await put(steps[0].id, {});
    expect(empty.status).toBe(400);

    const rows = await t.db<VariantRow>('step_variants').where({ step_id: steps[0].id }).orderBy('label');
    expect(rows.map((r) => [r.weight, r.subject, r.body])).toEqual([
      [50, opener.subject, opener.body],
      [50, opener.subject, opener.body],
    ]);
  });

  it("answers 404 for another workspace's step and 409 while active", async () => {
    const ws = await t.createWorkspace();
    const other = await t.createWorkspace();
    const { campaign, steps } = await readyCampaign(t, ws);
    const theirs = await raw(t, other, 'PUT', `/v2/campaign/sequences/${steps[0].id}`, { delayDays: 0 });
    expect(theirs).toMatchObject({ status: 404, body: { error: 'Sequence step not found.' } });
    expect((await raw(t, ws, 'PUT', `/v2/campaign/sequences/${newId()}`, { delayDays: 0 })).status).toBe(404);
    const badId = await raw(t, ws, 'PUT', '/v2/campaign/sequences/not-a-uuid', { delayDays: 0 });
    expect(badId.status).toBe(400);
    expect(badId.body.details[0]).toMatchObject({ field: 'path.id', location: 'path' });
    await ws.client.POST('/v2/campaign/launch', { body: { campaignId: campaign.id } });
    const active = await raw(t, ws, 'PUT', `/v2/campaign/sequences/${steps[0].id}`, { delayDays: 0 });
    expect(active.status).toBe(409);
  });
});

describe('DELETE /v2/campaign/sequences-delete', () => {
  it('deletes a step and moves the later ones up; the new first step waits 0 days', async () => {
    const ws = await t.createWorkspace();
    const { campaign, steps } = await withSteps(ws, [
      { delayDays: 0, variants: [opener] },
      { delayDays: 2, variants: [{ ...opener, subject: 'Second' }] },
      { delayDays: 4, variants: [followUp] },
    ]);
    const middle = await ws.client.DELETE('/v2/campaign/sequences-delete', {
      params: { query: { stepId: steps[1].id } },
    });
    expect(middle.data!.message).toBe('Sequence step deleted');
    expect(middle.data!.data.deletedStepId).toBe(steps[1].id);
    expect(middle.data!.data.steps.map((s) => [s.id, s.order, s.delayDays])).toEqual([
      [steps[0].id, 1, 0],
      [steps[2].id, 2, 4],
    ]);
    // The step after the first replies in its thread: deleting the first would leave a first step without subject.
    const blocked = await raw(t, ws, 'DELETE', `/v2/campaign/sequences-delete?stepId=${steps[0].id}`);
    expect(blocked.status).toBe(409);
    expect(blocked.body.error).toBe(
      'The next step would become the first, but its variant A replies in the thread of this one: give it a subject first.',
    );
    expect(await count('campaign_steps', { campaign_id: campaign.id })).toBe(2);

    await ws.client.PUT('/v2/campaign/sequences/{id}', {
      params: { path: { id: steps[2].id } },
      body: { variants: [{ id: steps[2].variants[0].id, subject: 'Now first' }] },
    });
    const first = await ws.client.DELETE('/v2/campaign/sequences-delete', {
      params: { query: { stepId: steps[0].id } },
    });
    expect(first.data!.data.steps.map((s) => [s.id, s.order, s.delayDays])).toEqual([[steps[2].id, 1, 0]]);
    expect(await count('step_variants', { step_id: steps[0].id })).toBe(0);
    const last = await ws.client.DELETE('/v2/campaign/sequences-delete', {
      params: { query: { stepId: steps[2].id } },
    });
    expect(last.data!.data.steps).toEqual([]);
  });

  it("answers 404 for another workspace's step, 409 while active, 400 for a bad id", async () => {
    const ws = await t.createWorkspace();
    const other = await t.createWorkspace();
    const { campaign, steps } = await readyCampaign(t, ws);
    expect(await raw(t, other, 'DELETE', `/v2/campaign/sequences-delete?stepId=${steps[0].id}`)).toMatchObject({
      status: 404,
      body: { error: 'Sequence step not found.' },
    });
    const bad = await raw(t, ws, 'DELETE', '/v2/campaign/sequences-delete?stepId=1');
    expect(bad.status).toBe(400);
    expect(bad.body.details[0]).toMatchObject({ field: 'query.stepId' });
    await ws.client.POST('/v2/campaign/launch', { body: { campaignId: campaign.id } });
    expect((await raw(t, ws, 'DELETE', `/v2/campaign/sequences-delete?stepId=${steps[0].id}`)).status).toBe(409);
    expect(await count('campaign_steps', { campaign_id: campaign.id })).toBe(1);
  });
});

describe('variants', () => {
  it('adds variants with the next labels, split evenly or with explicit weights', async () => {
    const ws = await t.createWorkspace();
    const { steps } = await withSteps(ws, [{ delayDays: 0, variants: [opener] }]);
    const even = await ws.client.POST('/v2/campaign/variants-create', {
      body: { stepId: steps[0].id, variants: [opener, opener] },
    });
    expect(even.response.status).toBe(201);
    expect(even.data!.message).toBe('Variants created');
    expect(even.data!.data.step.variants.map((v) => [v.label, v.weight])).toEqual([
      ['A', 34],
      ['B', 33],
      ['C', 33],
    ]);
    expect(even.data!.data.step.variants[0].id).toBe(steps[0].variants[0].id);
    const zero = await ws.client.POST('/v2/campaign/variants-create', {
      body: { stepId: steps[0].id, variants: [{ ...opener, weight: 0 }] },
    });
    expect(zero.data!.data.step.variants.map((v) => [v.label, v.weight])).toEqual([
      ['A', 34],
      ['B', 33],
      ['C', 33],
      ['D', 0],
    ]);
    const over = await raw(t, ws, 'POST', '/v2/campaign/variants-create', {
      stepId: steps[0].id,
      variants: [{ ...opener, weight: 10 }],
    });
    expect(over.status).toBe(400);
    expect(over.body.details).toEqual([
      expect.objectContaining({
        field: 'body.variants',
        code: 'weight_sum',
        message: "the step's variant weights must add up to 100, not 110.",
      }),
    ]);
  });

  it('checks first-step subjects, templates and the 26-variant limit', async () => {
    const ws = await t.createWorkspace();
    const { steps } = await withSteps(ws, [
      { delayDays: 0, variants: [opener] },
      { delayDays: 1, variants: [followUp] },
    ]);
    const res = await raw(t, ws, 'POST', '/v2/campaign/variants-create', {
      stepId: steps[0].id,
      variants: [
        { subject: '', body: 'x' },
        { subject: '{{x', body: 'y' },
      ],
    });
    expect(res.body.details.map((d) => [d.field, d.code])).toEqual([
      ['body.variants.0.subject', 'subject_required'],
      ['body.variants.1.subject', 'template'],
    ]);
    expect(
      (await raw(t, ws, 'POST', '/v2/campaign/variants-create', { stepId: steps[1].id, variants: [followUp] })).status,
    ).toBe(201);
    const many = await raw(t, ws, 'POST', '/v2/campaign/variants-create', {
      stepId: steps[1].id,
      variants: Array.from({ length: 25 }, () => followUp),
    });
    expect(many.status).toBe(400);
    expect(many.body.details).toEqual([expect.objectContaining({ field: 'body.variants', code: 'max_variants' })]);
    expect(await count('step_variants', { step_id: steps[1].id })).toBe(2);
  });

  it('deletes a variant, re-letters the rest and rescales their weights', async () => {
    const ws = await t.createWorkspace();
    const { steps } = await withSteps(ws, [
      {
        delayDays: 0,
        variants: [
          { ...opener, weight: 20 },
          { ...opener, weight: 50 },
          { ...opener, weight: 30 },
        ],
      },
    ]);
    const [a, b, c] = steps[0].variants;
    const { data } = await ws.client.DELETE('/v2/campaign/variants-delete', { params: { query: { variantId: a.id } } });
    expect(data!.message).toBe('Variant deleted');
    expect(data!.data.deletedVariantId).toBe(a.id);
    expect(data!.data.step.variants.map((v) => [v.id, v.label, v.weight])).toEqual([
      [b.id, 'A', 63],
      [c.id, 'B', 37],
    ]);
    const next = await ws.client.DELETE('/v2/campaign/variants-delete', { params: { query: { variantId: c.id } } });
    expect(next.data!.data.step.variants.map((v) => [v.id, v.label, v.weight])).toEqual([[b.id, 'A', 100]]);
    const lastOne = await raw(t, ws, 'DELETE', `/v2/campaign/variants-delete?variantId=${b.id}`);
    expect(lastOne.status).toBe(409);
    expect(lastOne.body).toMatchObject({
      error: 'A step keeps at least one variant: delete the step instead (DELETE /v2/campaign/sequences-delete).',
      details: [{ field: 'query.variantId', location: 'query', code: 'last_variant' }],
    });
    expect(await count('step_variants', { step_id: steps[0].id })).toBe(1);
  });

  it('hands a remainder of several points to the first variants', async () => {
    const ws = await t.createWorkspace();
    const weights = [40, 10, 10, 10, 10, 10, 10];
    const { steps } = await withSteps(ws, [
      { delayDays: 0, variants: weights.map((weight) => ({ ...opener, weight })) },
    ]);
    const { data } = await ws.client.DELETE('/v2/campaign/variants-delete', {
      params: { query: { variantId: steps[0].variants[0].id } },
    });
    // 6 x 16.67: four points of remainder.
    expect(data!.data.step.variants.map((v) => v.weight)).toEqual([17, 17, 17, 17, 16, 16]);
    expect(data!.data.step.variants.map((v) => v.label).join('')).toBe('ABCDEF');
  });

  it('splits evenly when the remaining weights are all 0', async () => {
    const ws = await t.createWorkspace();
    const { steps } = await withSteps(ws, [
      {
        delayDays: 0,
        variants: [
          { ...opener, weight: 100 },
          { ...opener, weight: 0 },
          { ...opener, weight: 0 },
        ],
      },
    ]);
    const { data } = await ws.client.DELETE('/v2/campaign/variants-delete', {
      params: { query: { variantId: steps[0].variants[0].id } },
    });
    expect(data!.data.step.variants.map((v) => [v.label, v.weight])).toEqual([
      ['A', 50],
      ['B', 50],
    ]);
  });

  it("answers 404 for another workspace's step or variant and 409 while active", async () => {
    const ws = await t.createWorkspace();
    const other = await t.createWorkspace();
    const { campaign, steps } = await readyCampaign(t, ws);
    const variantId = steps[0].variants[0].id;
    expect(
      await raw(t, other, 'POST', '/v2/campaign/variants-create', { stepId: steps[0].id, variants: [opener] }),
    ).toMatchObject({
      status: 404,
      body: { error: 'Sequence step not found.' },
    });
    expect(await raw(t, other, 'DELETE', `/v2/campaign/variants-delete?variantId=${variantId}`)).toMatchObject({
      status: 404,
      body: { error: 'Variant not found.' },
    });
    await ws.client.POST('/v2/campaign/launch', { body: { campaignId: campaign.id } });
    const create = await raw(t, ws, 'POST', '/v2/campaign/variants-create', {
      stepId: steps[0].id,
      variants: [opener],
    });
    expect(create.status).toBe(409);
    await ws.client.POST('/v2/campaign/variants-create', { body: { stepId: steps[0].id, variants: [opener] } });
    expect(await count('step_variants', { step_id: steps[0].id })).toBe(1);
  });
});
