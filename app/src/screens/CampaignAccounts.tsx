/** The accounts a campaign sends from: the linked ones with their status, and the workspace's to choose from. */
import { useState } from 'react';
import { useSetCampaignAccounts, type CampaignDetail } from '../hooks/api/campaigns';
import { useAccounts } from '../hooks/api/accounts';
import { Empty, ErrorNotice, Loaded } from '../components/states';
import { useCan } from '../session';

export function CampaignAccounts({
  campaignId,
  linked,
  canWrite,
}: {
  campaignId: string;
  linked: CampaignDetail['accounts'];
  canWrite: boolean;
}) {
  const canChoose = useCan('accounts:read') && canWrite;
  return (
    <section aria-labelledby="campaign-accounts-title">
      <h2 id="campaign-accounts-title">Sending accounts</h2>
      {canChoose ? (
        <ChooseAccounts campaignId={campaignId} linked={linked.map((a) => a.id)} />
      ) : linked.length ? (
        <ul>
          {linked.map((a) => (
            <li key={a.id}>
              {a.email} ({a.status})
            </li>
          ))}
        </ul>
      ) : (
        <Empty>No accounts linked.</Empty>
      )}
    </section>
  );
}

function ChooseAccounts({ campaignId, linked }: { campaignId: string; linked: string[] }) {
  const accounts = useAccounts();
  const [chosen, setChosen] = useState(linked);
  const save = useSetCampaignAccounts();
  return (
    <Loaded query={accounts} what="the accounts">
      {({ data }) =>
        data.items.length === 0 ? (
          <Empty>No email accounts yet: connect one under Accounts.</Empty>
        ) : (
          <fieldset>
            <legend>Send from</legend>
            {data.items.map((a) => (
              <label key={a.id} className="check">
                <input
                  type="checkbox"
                  checked={chosen.includes(a.id)}
                  onChange={(e) => setChosen(e.target.checked ? [...chosen, a.id] : chosen.filter((id) => id !== a.id))}
                />{' '}
                {a.email} ({a.status})
              </label>
            ))}
            <button
              type="button"
              disabled={save.isPending}
              onClick={() => save.mutate({ body: { campaignId, accountIds: chosen } })}
            >
              Save accounts
            </button>
            {save.isSuccess ? <p role="status">Accounts saved.</p> : null}
            <ErrorNotice error={save.error} />
          </fieldset>
        )
      }
    </Loaded>
  );
}
