/**
 * One campaign as it was written (`GET /v2/campaign/get`): its status with launch and pause, duplicate and
 * delete; its figures (the funnel and the daily sends) as charts; the sequence editor with the saved steps;
 * its subsequences; the preview of a contact's next message; the schedule and options; the linked accounts.
 */
import { useMemo, useState } from 'react';
import {
  useCampaign,
  useDeleteCampaign,
  useDuplicateCampaign,
  useLaunchCampaign,
  usePauseCampaign,
  type CampaignDetail,
} from '../hooks/api/campaigns';
import { useCampaignSummary } from '../hooks/api/analytics';
import { Chart, dailySeries } from '../components/Chart';
import { ConfirmDialog } from '../components/Confirm';
import { DataTable } from '../components/DataTable';
import { Empty, ErrorNotice, Loaded } from '../components/states';
import { useCan } from '../session';
import { href } from '../route';
import { INTENTS, LEAD_STATUSES } from '../vocabulary';
import { SequenceEditor } from './SequenceEditor';
import { Preview } from './Preview';
import { ScheduleForm } from './ScheduleForm';
import { CampaignAccounts } from './CampaignAccounts';

export function Campaign({ campaignId }: { campaignId: string }) {
  // Another campaign (a duplicate just made) starts with forms of its own, not the last one's edits.
  return <CampaignPage key={campaignId} campaignId={campaignId} />;
}

function CampaignPage({ campaignId }: { campaignId: string }) {
  const campaign = useCampaign(campaignId);
  const canWrite = useCan('campaigns:write');
  const canAnalytics = useCan('analytics:read');
  const canPreview = useCan('sending:read');
  const shown = campaign.data?.data.campaign;
  return (
    <section aria-labelledby="campaign-title">
      <p>
        <a href={href('campaigns')}>All campaigns</a>
      </p>
      <Loaded query={campaign} what="the campaign">
        {({ data }) => (
          <>
            <h1 id="campaign-title">{data.campaign.name}</h1>
            <StatusBar campaign={data.campaign} canWrite={canWrite} />
          </>
        )}
      </Loaded>
      {/* The figures are asked for beside the campaign, not after it. */}
      {canAnalytics ? <Figures campaignId={campaignId} /> : null}
      {shown ? (
        <>
          <SequenceEditor campaign={shown} canWrite={canWrite} />
          <Subsequences campaign={shown} />
          {canPreview ? <Preview campaignId={campaignId} /> : null}
          <ScheduleForm campaign={shown} canWrite={canWrite} />
          <CampaignAccounts campaignId={campaignId} linked={shown.accounts} canWrite={canWrite} />
        </>
      ) : null}
    </section>
  );
}

function StatusBar({ campaign, canWrite }: { campaign: CampaignDetail; canWrite: boolean }) {
  const campaignId = campaign.id;
  const launch = useLaunchCampaign();
  const pause = usePauseCampaign();
  const duplicate = useDuplicateCampaign();
  const remove = useDeleteCampaign();
  const [confirming, setConfirming] = useState(false);
  return (
    <div className="status-bar">
      <p>
        Status: <span className={`badge ${campaign.status}`}>{campaign.status}</span>
        {campaign.pauseReason ? ` (${campaign.pauseReason.message})` : ''}
      </p>
      {canWrite && (campaign.status === 'draft' || campaign.status === 'paused') ? (
        <button type="button" disabled={launch.isPending} onClick={() => launch.mutate({ body: { campaignId } })}>
          Launch
        </button>
      ) : null}
      {canWrite && campaign.status === 'active' ? (
        <button type="button" disabled={pause.isPending} onClick={() => pause.mutate({ body: { campaignId } })}>
          Pause
        </button>
      ) : null}
      {canWrite ? (
        <>
          <button
            type="button"
            disabled={duplicate.isPending}
            onClick={() =>
              duplicate.mutate(
                { body: { campaignId } },
                { onSuccess: ({ data }) => void (window.location.hash = href('campaigns', data.campaign.id)) },
              )
            }
          >
            Duplicate
          </button>
          <button type="button" className="danger" disabled={remove.isPending} onClick={() => setConfirming(true)}>
            Delete
          </button>
          <ConfirmDialog
            open={confirming}
            confirmLabel="Delete the campaign"
            onClose={() => setConfirming(false)}
            onConfirm={() =>
              remove.mutate(
                { body: { campaignId } },
                { onSuccess: () => void (window.location.hash = href('campaigns')) },
              )
            }
          >
            Delete “{campaign.name}”? Nothing more is sent for it, and it and its contacts can no longer be read;
            replies still reach the unibox.
          </ConfirmDialog>
        </>
      ) : null}
      <ErrorNotice error={launch.error ?? pause.error ?? duplicate.error ?? remove.error} />
    </div>
  );
}

const FUNNEL = ['sent', 'opened', 'clicked', 'replied'] as const;

function Figures({ campaignId }: { campaignId: string }) {
  const summary = useCampaignSummary(campaignId);
  const graph = summary.data?.data.graph;
  const daily = useMemo(() => graph && dailySeries(graph, { Sent: 'sent', Replied: 'replied' }), [graph]);
  const unique = summary.data?.data.unique;
  const funnel = useMemo(() => unique && [{ label: 'Contacts', values: FUNNEL.map((k) => unique[k]) }], [unique]);
  return (
    <section aria-labelledby="figures-title">
      <h2 id="figures-title">Figures</h2>
      <Loaded query={summary} what="the figures">
        {({ data }) => (
          <>
            <dl className="figures">
              {FUNNEL.map((k) => (
                <div key={k}>
                  <dt>{k}</dt>
                  <dd data-figure={k}>{data.totals[k]}</dd>
                </div>
              ))}
            </dl>
            {funnel ? <Chart title="Funnel (unique contacts)" categories={FUNNEL} series={funnel} /> : null}
            {daily ? <Chart title="Daily sends" {...daily} /> : null}
          </>
        )}
      </Loaded>
    </section>
  );
}

type Trigger = CampaignDetail['subsequences'][number]['trigger'];

/** What moves a contact into a subsequence, in words; a watched step by its place in the sequence. */
function describeTrigger(trigger: Trigger, sequence: CampaignDetail['sequence']): string {
  const step = () => {
    const order = sequence.find((s) => s.id === trigger.stepId)?.order;
    return order ? `step ${order}` : 'a step no longer in the sequence';
  };
  switch (trigger.type) {
    case 'replyIntent':
      return trigger.intent ? `a reply: ${INTENTS[trigger.intent]}` : 'a reply';
    case 'leadStatus':
      return trigger.leadStatus ? `lead status set to ${LEAD_STATUSES[trigger.leadStatus]}` : 'lead status cleared';
    case 'opened':
      return `opened ${step()}`;
    case 'clicked':
      return `clicked a link in ${step()}`;
    case 'noReply':
      return 'no reply after the last step';
    case 'replyContains':
      return `a reply containing “${trigger.phrase}”`;
  }
}

function Subsequences({ campaign }: { campaign: CampaignDetail }) {
  return (
    <section aria-labelledby="subsequences-title">
      <h2 id="subsequences-title">Subsequences</h2>
      {campaign.subsequences.length === 0 ? (
        <Empty>No subsequences.</Empty>
      ) : (
        <DataTable
          caption="Subsequences"
          columns={[
            { header: 'Name', cell: (s) => s.name },
            { header: 'Entered on', cell: (s) => describeTrigger(s.trigger, campaign.sequence) },
            { header: 'Status', cell: (s) => <span className={`badge ${s.status}`}>{s.status}</span> },
            { header: 'Id', cell: (s) => <code>{s.id}</code> },
          ]}
          rows={campaign.subsequences}
          rowKey={(s) => s.id}
        />
      )}
    </section>
  );
}
