/**
 * One campaign: its status with launch and pause, the sequence editor, the preview of a contact's next message,
 * the schedule and options, the linked accounts, and its figures (the funnel and the daily sends) as charts.
 */
import { useMemo } from 'react';
import { useCampaignName, useCampaignStatus, useLaunchCampaign, usePauseCampaign } from '../hooks/api/campaigns';
import { useCampaignSummary } from '../hooks/api/analytics';
import { Chart } from '../components/Chart';
import { ErrorNotice, Loaded } from '../components/states';
import { useCan } from '../session';
import { href } from '../route';
import { SequenceEditor } from './SequenceEditor';
import { Preview } from './Preview';
import { ScheduleForm } from './ScheduleForm';
import { CampaignAccounts } from './CampaignAccounts';

export function Campaign({ campaignId }: { campaignId: string }) {
  const name = useCampaignName(campaignId);
  const canWrite = useCan('campaigns:write');
  const canAnalytics = useCan('analytics:read');
  const canPreview = useCan('sending:read');
  return (
    <section aria-labelledby="campaign-title">
      <p>
        <a href={href('campaigns')}>All campaigns</a>
      </p>
      <Loaded query={name} what="the campaign">
        {({ data }) => <h1 id="campaign-title">{data.name}</h1>}
      </Loaded>
      <StatusBar campaignId={campaignId} canWrite={canWrite} />
      {canAnalytics ? <Figures campaignId={campaignId} /> : null}
      {canWrite ? <SequenceEditor campaignId={campaignId} /> : null}
      {canPreview ? <Preview campaignId={campaignId} /> : null}
      {canWrite ? <ScheduleForm campaignId={campaignId} /> : null}
      <CampaignAccounts campaignId={campaignId} canWrite={canWrite} />
    </section>
  );
}

function StatusBar({ campaignId, canWrite }: { campaignId: string; canWrite: boolean }) {
  const status = useCampaignStatus(campaignId);
  const launch = useLaunchCampaign();
  const pause = usePauseCampaign();
  return (
    <Loaded query={status} what="the status">
      {({ data }) => (
        <div className="status-bar">
          <p>
            Status: <span className={`badge ${data.status}`}>{data.status}</span>
            {data.pauseReason ? ` (${data.pauseReason.message})` : ''}
          </p>
          {canWrite && (data.status === 'draft' || data.status === 'paused') ? (
            <button type="button" disabled={launch.isPending} onClick={() => launch.mutate({ body: { campaignId } })}>
              Launch
            </button>
          ) : null}
          {canWrite && data.status === 'active' ? (
            <button type="button" disabled={pause.isPending} onClick={() => pause.mutate({ body: { campaignId } })}>
              Pause
            </button>
          ) : null}
          <ErrorNotice error={launch.error ?? pause.error} />
        </div>
      )}
    </Loaded>
  );
}

const FUNNEL = ['sent', 'opened', 'clicked', 'replied'] as const;

function Figures({ campaignId }: { campaignId: string }) {
  const summary = useCampaignSummary(campaignId);
  const graph = summary.data?.data.graph;
  const daily = useMemo(
    () =>
      graph && {
        days: graph.map((d) => d.date),
        series: [
          { label: 'Sent', values: graph.map((d) => d.sent) },
          { label: 'Replied', values: graph.map((d) => d.replied) },
        ],
      },
    [graph],
  );
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
            {daily ? <Chart title="Daily sends" days={daily.days} series={daily.series} /> : null}
          </>
        )}
      </Loaded>
    </section>
  );
}
