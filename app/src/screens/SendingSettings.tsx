/**
 * The workspace's sending settings (GET and POST /v2/sending/settings): the daily cap per recipient domain across
 * every campaign, and the bounce protection that pauses an account, or a campaign, whose hard bounces pass a rate.
 */
import { useState, type FormEvent } from 'react';
import { useSendingSettings, useUpdateSendingSettings, type SendingSettingsValues } from '../hooks/api/sending';
import { NumberInput } from '../components/NumberInput';
import { ErrorNotice, Loaded } from '../components/states';
import { useCan } from '../session';

type Settings = SendingSettingsValues;

export function SendingSettings() {
  const settings = useSendingSettings();
  return (
    <section aria-labelledby="sending-title">
      <h2 id="sending-title">Sending</h2>
      <Loaded query={settings} what="the sending settings">
        {({ data }) => <SettingsForm saved={data.settings} />}
      </Loaded>
    </section>
  );
}

/**
 * Each setting's field, grouped by what it governs: its bounds as the spec gives them; `nullable` where empty turns
 * the setting off.
 */
const FIELDS: {
  group: 'Recipient domains' | 'Accounts' | 'Campaigns';
  key: keyof Settings;
  label: string;
  hint: string;
  min: number;
  max: number;
  step?: number;
  nullable?: boolean;
}[] = [
  {
    group: 'Recipient domains',
    key: 'recipientDomainDailyLimit',
    label: 'Emails a day to one recipient domain',
    hint: 'Across every campaign and account; empty for no cap.',
    min: 1,
    max: 10000,
    nullable: true,
  },
  {
    group: 'Accounts',
    key: 'bounceRatePercent',
    label: 'Pause an account above this bounce rate (%)',
    hint: "Hard bounces over the account's last sends (the window below).",
    min: 0.1,
    max: 100,
    step: 0.1,
  },
  {
    group: 'Accounts',
    key: 'bounceWindow',
    label: 'Account bounce window (sends)',
    hint: "How many of an account's last campaign sends the rate is taken over.",
    min: 5,
    max: 10000,
  },
  {
    group: 'Campaigns',
    key: 'campaignBounceRatePercent',
    label: 'Pause a campaign above this bounce rate (%)',
    hint: 'Empty: campaigns never pause for bounces (accounts still do).',
    min: 0.1,
    max: 100,
    step: 0.1,
    nullable: true,
  },
  {
    group: 'Campaigns',
    key: 'campaignBounceWindow',
    label: 'Campaign bounce window (sends)',
    hint: "How many of a campaign's last sends the rate is taken over.",
    min: 5,
    max: 10000,
  },
];

function SettingsForm({ saved }: { saved: Settings }) {
  const canWrite = useCan('sending:write');
  const [form, setForm] = useState(saved);
  const update = useUpdateSendingSettings();
  const submit = (event: FormEvent) => {
    event.preventDefault();
    update.mutate({ body: form });
  };
  return (
    <form onSubmit={submit}>
      {[...new Set(FIELDS.map((f) => f.group))].map((group) => (
        <fieldset key={group} className="grid">
          <legend>{group}</legend>
          {FIELDS.filter((f) => f.group === group).map((f) => {
            const id = `sending-${f.key}`;
            return (
              <div className="field" key={f.key}>
                <label htmlFor={id}>{f.label}</label>
                <NumberInput
                  id={id}
                  min={f.min}
                  max={f.max}
                  step={f.step ?? 1}
                  required={!f.nullable}
                  disabled={!canWrite}
                  aria-describedby={`${id}-hint`}
                  value={form[f.key]}
                  onChange={(value) => setForm({ ...form, [f.key]: value ?? null })}
                />
                <small id={`${id}-hint`} className="hint">
                  {f.hint}
                </small>
              </div>
            );
          })}
        </fieldset>
      ))}
      {canWrite ? (
        <button type="submit" disabled={update.isPending}>
          Save sending settings
        </button>
      ) : null}
      {update.isSuccess ? <p role="status">Sending settings saved; the next sending run applies them.</p> : null}
      <ErrorNotice error={update.error} />
    </form>
  );
}
