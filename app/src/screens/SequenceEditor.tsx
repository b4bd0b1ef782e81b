/**
 * The sequence editor: steps with their delay and A/B variants (subject and body, spintax such as
 * `{Hi|Hello} {{firstName}}` allowed), appended to the end of the campaign's sequence in one request.
 */
import { useState, type FormEvent } from 'react';
import { useAppendSteps, type SequenceSteps } from '../hooks/api/campaigns';
import { ErrorNotice } from '../components/states';

type Step = SequenceSteps[number];
type Unit = NonNullable<Step['delay']>['unit'];

const newStep = (first: boolean): Step => ({
  delay: { value: first ? 0 : 2, unit: 'days' },
  variants: [{ subject: '', body: '' }],
});

export function SequenceEditor({ campaignId }: { campaignId: string }) {
  const [steps, setSteps] = useState<Step[]>([newStep(true)]);
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
    <section aria-labelledby="sequence-title">
      <h2 id="sequence-title">Sequence</h2>
      <p className="hint">
        Steps are added to the end of the sequence. Spintax such as {'{Hi|Hello}'} and variables such as{' '}
        {'{{firstName}}'} are rendered per contact (see the preview).
      </p>
      <form onSubmit={submit}>
        {steps.map((step, index) => (
          <StepFields
            key={index}
            index={index}
            step={step}
            onChange={(s) => change(index, s)}
            onRemove={steps.length > 1 ? () => setSteps(steps.filter((_, i) => i !== index)) : undefined}
          />
        ))}
        <div className="actions">
          <button type="button" onClick={() => setSteps([...steps, newStep(false)])} disabled={steps.length >= 20}>
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
    </section>
  );
}

function StepFields({
  index,
  step,
  onChange,
  onRemove,
}: {
  index: number;
  step: Step;
  onChange: (step: Step) => void;
  onRemove: (() => void) | undefined;
}) {
  const id = `step-${index}`;
  const delay = step.delay ?? { value: 0, unit: 'days' as Unit };
  const setVariant = (v: number, patch: Partial<Step['variants'][number]>) =>
    onChange({ ...step, variants: step.variants.map((x, i) => (i === v ? { ...x, ...patch } : x)) });
  return (
    <fieldset className="step">
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
      <button
        type="button"
        disabled={step.variants.length >= 26}
        onClick={() => onChange({ ...step, variants: [...step.variants, { subject: '', body: '' }] })}
      >
        Add variant to step {index + 1}
      </button>
    </fieldset>
  );
}
