/**
 * The workspace's sending settings (GET and POST /v2/sending/settings): the daily cap per recipient domain across
 * every campaign, and the bounce protection that pauses an account, or a campaign, whose hard bounces pass a rate.
 */
import { useState, type FormEvent } from 'react';
import { useSendingSettings, useUpdateSendingSettings, type SendingSettingsValues } from '../hooks/api/sending';
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

/** A number field; empty means `null` where the setting can be off. */
function NumberField({
  id,
  label,
  hint,
  value,
  onChange,
  min,
  max,
  step = 1,
  nullable = false,
  disabled,
}: {
  id: string;
  label: string;
  hint: string;
  value: number | null;
  onChange: (value: number | null) => void;
  min: number;
  max: number;
  step?: number;
  nullable?: boolean;
  disabled: boolean;
}) {
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input
        id={id}
        type="number"
        min={min}
        max={max}
        step={step}
        required={!nullable}
        disabled={disabled}
        aria-describedby={`${id}-hint`}
        value={value ?? ''}
        onChange={(e) => onChange(e.target.value === '' ? null : Number(e.target.value))}
      />
      <small id={`${id}-hint`} className="hint">
        {hint}
      </small>
    </div>
  );
}

function SettingsForm({ saved }: { saved: Settings }) {
  const canWrite = useCan('sending:write');
  const [form, setForm] = useState(saved);
  const update = useUpdateSendingSettings();
  const submit = (event: FormEvent) => {
    event.preventDefault();
    update.mutate({ body: form });
  };
  const set = (patch: Partial<Settings>) => setForm({ ...form, ...patch });
  return (
    <form onSubmit={submit}>
      <div className="grid">
        <NumberField
          id="sending-domain-limit"
          label="Emails a day to one recipient domain"
          hint="Across every campaign and account; empty for no cap."
          value={form.recipientDomainDailyLimit}
          onChange={(recipientDomainDailyLimit) => set({ recipientDomainDailyLimit })}
          min={1}
          max={10000}
          nullable
          disabled={!canWrite}
        />
        <NumberField
          id="sending-bounce-rate"
          label="Pause an account above this bounce rate (%)"
          hint="Hard bounces over its last sends (the window below)."
          value={form.bounceRatePercent}
          onChange={(v) => set({ bounceRatePercent: v ?? saved.bounceRatePercent })}
          min={0.1}
          max={100}
          step={0.1}
          disabled={!canWrite}
        />
        <NumberField
          id="sending-bounce-window"
          label="Account bounce window (sends)"
          hint="How many of an account's last campaign sends the rate is taken over."
          value={form.bounceWindow}
          onChange={(v) => set({ bounceWindow: v ?? saved.bounceWindow })}
          min={5}
          max={10000}
          disabled={!canWrite}
        />
        <NumberField
          id="sending-campaign-bounce-rate"
          label="Pause a campaign above this bounce rate (%)"
          hint="Empty: campaigns never pause for bounces (accounts still do)."
          value={form.campaignBounceRatePercent}
          onChange={(campaignBounceRatePercent) => set({ campaignBounceRatePercent })}
          min={0.1}
          max={100}
          step={0.1}
          nullable
          disabled={!canWrite}
        />
        <NumberField
          id="sending-campaign-bounce-window"
          label="Campaign bounce window (sends)"
          hint="How many of a campaign's last sends the rate is taken over."
          value={form.campaignBounceWindow}
          onChange={(v) => set({ campaignBounceWindow: v ?? saved.campaignBounceWindow })}
          min={5}
          max={10000}
          disabled={!canWrite}
        />
      </div>
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
