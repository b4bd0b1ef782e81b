/**
 * The sequence editor: the saved steps as `GET /v2/campaign/get` reads them (delay, A/B variants with subject and
 * body), each edited in place (`PUT /v2/campaign/sequences/{id}`) and given new variants
 * (`POST /v2/campaign/variants-create`); and new steps appended to the end in one request
 * (`POST /v2/campaign/sequence-create`). Spintax such as `{Hi|Hello} {{firstName}}` is allowed everywhere.
 */
import { useState, type FormEvent } from 'react';
import {
  useAddVariants,
  useAppendSteps,
  useUpdateStep,
  type CampaignDetail,
  type SequenceSteps,
} from '../hooks/api/campaigns';
import { Empty, ErrorNotice } from '../components/states';

type Step = SequenceSteps[number];
type Unit = NonNullable<Step['delay']>['unit'];
type SavedStep = CampaignDetail['sequence'][number];

const newStep = (first: boolean): Step => ({
  delay: { value: first ? 0 : 2, unit: 'days' },
  variants: [{ subject: '', body: '' }],
});

/** A saved step as the form edits it; its variants keep their order, the saved ones first. */
const toDraft = (step: SavedStep): Step => ({
  delay: step.delay,
  variants: step.variants.map(({ subject, body }) => ({ subject, body })),
});

export function SequenceEditor({ campaign, canWrite }: { campaign: CampaignDetail; canWrite: boolean }) {
  const steps = campaign.sequence;
  return (
    <section aria-labelledby="sequence-title">
      <h2 id="sequence-title">Sequence</h2>
      {canWrite && campaign.status === 'active' ? (
        <p className="hint">The campaign is sending: pause it to change its sequence.</p>
      ) : null}
      {steps.length === 0 ? <Empty>No steps yet.</Empty> : null}
      {steps.map((step) => (
        <SavedStepForm key={step.id} step={step} canWrite={canWrite} />
      ))}
      {canWrite ? <NewSteps campaignId={campaign.id} first={steps.length + 1} /> : null}
    </section>
  );
}

/** A saved step, changed in place: its wait and variants in one request, then its new variants in another. */
function SavedStepForm({ step, canWrite }: { step: SavedStep; canWrite: boolean }) {
  const [draft, setDraft] = useState(() => toDraft(step));
  // The step as last read: when a save (or another tab) changes it, the form starts again from what is saved.
  // Query results keep the identity of what did not change, so an unrelated refresh keeps the edits.
  const [readStep, setReadStep] = useState(step);
  if (readStep !== step) {
    setReadStep(step);
    setDraft(toDraft(step));
  }
  const update = useUpdateStep();
  const addVariants = useAddVariants();
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const delay = draft.delay!;
    const delayChanged = delay.value !== step.delay.value || delay.unit !== step.delay.unit;
    const changed = step.variants.flatMap((saved, i) => {
      const { subject, body } = draft.variants[i];
      if (subject === saved.subject && body === saved.body) return [];
      return [{ id: saved.id, subject, body }];
    });
    const added = draft.variants.slice(step.variants.length);
    try {
      if (delayChanged || changed.length)
        await update.mutateAsync({
          params: { path: { id: step.id } },
          body: { ...(delayChanged ? { delay } : {}), ...(changed.length ? { variants: changed } : {}) },
        });
      if (added.length) await addVariants.mutateAsync({ body: { stepId: step.id, variants: added } });
    } catch {
      // Shown below in the API's words.
    }
  };
  const pending = update.isPending || addVariants.isPending;
  const saved = (update.isSuccess || addVariants.isSuccess) && !pending && !update.error && !addVariants.error;
  return (
    <form onSubmit={(e) => void submit(e)} aria-label={`Step ${step.order}`}>
      <StepFields index={step.order - 1} step={draft} onChange={setDraft} disabled={!canWrite} />
      {canWrite ? (
        <div className="actions">
          <button type="submit" disabled={pending}>
            Save step {step.order}
          </button>
          {saved ? <p role="status">Step {step.order} saved.</p> : null}
        </div>
      ) : null}
      <ErrorNotice error={update.error ?? addVariants.error} />
    </form>
  );
}

/** New steps, appended to the end of the sequence in one request. */
function NewSteps({ campaignId, first }: { campaignId: string; first: number }) {
  const [steps, setSteps] = useState<Step[]>(() => [newStep(first === 1)]);
  const [saved, setSaved] = useState<number | null>(null);
  const append = useAppendSteps();
  const change = (index: number, step: Step) => setSteps(steps.map((s, i) => (i === index ? step : s)));
  const submit = (event: FormEvent) => {
    event.preventDefault();
    append.mutate(
      { body: { campaignId, steps } },
      {
        onSuccess: () => {
          setSaved(steps.length);
          setSteps([newStep(false)]);
        },
      },
    );
  };
  return (
    <form onSubmit={submit} aria-labelledby="new-steps-title">
      <h3 id="new-steps-title">Add steps</h3>
      <p className="hint">
        Steps are added to the end of the sequence. Spintax such as {'{Hi|Hello}'} and variables such as{' '}
        {'{{firstName}}'} are rendered per contact (see the preview).
      </p>
      {steps.map((step, index) => (
        <StepFields
          key={index}
          index={first - 1 + index}
          step={step}
          onChange={(s) => change(index, s)}
          onRemove={steps.length > 1 ? () => setSteps(steps.filter((_, i) => i !== index)) : undefined}
        />
      ))}
      <div className="actions">
        <button type="button" onClick={() => setSteps([...steps, newStep(false)])} disabled={first + steps.length > 20}>
          Add step
        </button>
        <button type="submit" disabled={append.isPending}>
          Save steps
        </button>
      </div>
      {saved !== null && !append.error ? (
        <p role="status">
          {saved} {saved === 1 ? 'step' : 'steps'} added to the sequence.
        </p>
      ) : null}
      <ErrorNotice error={append.error} />
    </form>
  );
}

function StepFields({
  index,
  step,
  onChange,
  onRemove,
  disabled = false,
}: {
  /** The step's place in the sequence, from 0. */
  index: number;
  step: Step;
  onChange: (step: Step) => void;
  onRemove?: () => void;
  disabled?: boolean;
}) {
  const id = `step-${index}`;
  const delay = step.delay ?? { value: 0, unit: 'days' as Unit };
  const setVariant = (v: number, patch: Partial<Step['variants'][number]>) =>
    onChange({ ...step, variants: step.variants.map((x, i) => (i === v ? { ...x, ...patch } : x)) });
  return (
    <fieldset className="step" disabled={disabled}>
      <legend>Step {index + 1}</legend>
      <div className="row">
        <label htmlFor={`${id}-delay`}>Wait</label>
        <input
          id={`${id}-delay`}
          type="number"
          min={0}
          max={525600}
          value={delay.value}
          onChange={(e) => onChange({ ...step, delay: { ...delay, value: Number(e.target.value) } })}
        />
        <label htmlFor={`${id}-unit`} className="visually-hidden">
          Unit of step {index + 1}&apos;s wait
        </label>
        <select
          id={`${id}-unit`}
          value={delay.unit}
          onChange={(e) => onChange({ ...step, delay: { ...delay, unit: e.target.value as Unit } })}
        >
          <option value="minutes">minutes</option>
          <option value="hours">hours</option>
          <option value="days">days</option>
        </select>
        {onRemove ? (
          <button type="button" onClick={onRemove}>
            Remove step {index + 1}
          </button>
        ) : null}
      </div>
      {step.variants.map((variant, v) => {
        const letter = String.fromCharCode(65 + v);
        return (
          <div className="variant" key={v}>
            <label htmlFor={`${id}-${v}-subject`}>
              Step {index + 1} variant {letter} subject
            </label>
            <input
              id={`${id}-${v}-subject`}
              maxLength={500}
              value={variant.subject}
              onChange={(e) => setVariant(v, { subject: e.target.value })}
            />
            <label htmlFor={`${id}-${v}-body`}>
              Step {index + 1} variant {letter} body
            </label>
            <textarea
              id={`${id}-${v}-body`}
              required
              maxLength={50000}
              rows={4}
              value={variant.body}
              onChange={(e) => setVariant(v, { body: e.target.value })}
            />
          </div>
        );
      })}
      {disabled ? null : (
        <button
          type="button"
          disabled={step.variants.length >= 26}
          onClick={() => onChange({ ...step, variants: [...step.variants, { subject: '', body: '' }] })}
        >
          Add variant to step {index + 1}
        </button>
      )}
    </fieldset>
  );
}
