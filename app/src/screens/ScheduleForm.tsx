/** The sending schedule (time zone, days, daily window) and the main options, as saved, changed together. */
import { Fragment, useState, type FormEvent } from 'react';
import { useSetSchedule, type CampaignDetail, type Schedule } from '../hooks/api/campaigns';
import { NumberInput } from '../components/NumberInput';
import { ErrorNotice } from '../components/states';

const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
type Options = NonNullable<Schedule['options']>;
/** The options this form shows, each a yes or no. */
const SWITCHES = [
  ['stopOnReply', 'Stop on reply'],
  ['trackOpens', 'Track opens'],
  ['trackClicks', 'Track clicks'],
  ['textOnly', 'Plain text only'],
] as const;

export function ScheduleForm({ campaign, canWrite }: { campaign: CampaignDetail; canWrite: boolean }) {
  const campaignId = campaign.id;
  // A campaign without a schedule yet is offered weekdays 9 to 5 where the browser is.
  const [schedule, setSchedule] = useState<Schedule['schedule']>(
    () =>
      campaign.schedule ?? {
        timezone: Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC',
        days: [1, 2, 3, 4, 5],
        from: '09:00',
        to: '17:00',
      },
  );
  const [options, setOptions] = useState<Options>(() => {
    const { dailyLimit, stopOnReply, trackOpens, trackClicks, textOnly } = campaign.options;
    return { dailyLimit, stopOnReply, trackOpens, trackClicks, textOnly };
  });
  const save = useSetSchedule();
  const submit = (event: FormEvent) => {
    event.preventDefault();
    save.mutate({ body: { campaignId, schedule, options } });
  };
  const toggleDay = (day: number) =>
    setSchedule({
      ...schedule,
      days: schedule.days.includes(day) ? schedule.days.filter((d) => d !== day) : [...schedule.days, day].sort(),
    });
  return (
    <section aria-labelledby="schedule-title">
      <h2 id="schedule-title">Schedule and options</h2>
      <form onSubmit={submit}>
        {/* One switch for a key that may only read: every field shows its value, none can change. */}
        <fieldset className="plain" disabled={!canWrite}>
          <legend className="visually-hidden">Schedule</legend>
          <div className="row">
            <label htmlFor="schedule-timezone">Time zone</label>
            <input
              id="schedule-timezone"
              required
              maxLength={64}
              value={schedule.timezone}
              onChange={(e) => setSchedule({ ...schedule, timezone: e.target.value })}
            />
            {(['from', 'to'] as const).map((bound) => (
              <Fragment key={bound}>
                <label htmlFor={`schedule-${bound}`}>{bound === 'from' ? 'From' : 'To'}</label>
                <input
                  id={`schedule-${bound}`}
                  type="time"
                  required
                  value={schedule[bound]}
                  onChange={(e) => setSchedule({ ...schedule, [bound]: e.target.value })}
                />
              </Fragment>
            ))}
          </div>
          <fieldset>
            <legend>Days</legend>
            {DAYS.map((name, day) => (
              <label key={name} className="check">
                <input type="checkbox" checked={schedule.days.includes(day)} onChange={() => toggleDay(day)} /> {name}
              </label>
            ))}
          </fieldset>
          <fieldset>
            <legend>Options</legend>
            <label htmlFor="option-daily-limit">Daily limit</label>
            <NumberInput
              id="option-daily-limit"
              min={1}
              max={10000}
              value={options.dailyLimit}
              onChange={(dailyLimit) => setOptions({ ...options, dailyLimit: dailyLimit ?? null })}
            />
            {SWITCHES.map(([option, label]) => (
              <label key={option} className="check">
                <input
                  type="checkbox"
                  checked={options[option] ?? false}
                  onChange={(e) => setOptions({ ...options, [option]: e.target.checked })}
                />{' '}
                {label}
              </label>
            ))}
          </fieldset>
        </fieldset>
        {canWrite ? (
          <button type="submit" disabled={save.isPending}>
            Save schedule
          </button>
        ) : null}
        {save.isSuccess ? <p role="status">Schedule saved.</p> : null}
        <ErrorNotice error={save.error} />
      </form>
    </section>
  );
}
