/** A filter of several values as a group of checkboxes, folded under a summary that counts the chosen ones. */
import { valuesOf } from '../vocabulary';

export function Choices<K extends string>({
  legend,
  words,
  chosen,
  onChange,
}: {
  legend: string;
  words: Record<K, string>;
  chosen: K[];
  onChange: (chosen: K[]) => void;
}) {
  return (
    <details className="choices">
      <summary>
        {legend}
        {chosen.length ? ` (${chosen.length})` : ''}
      </summary>
      <fieldset>
        <legend className="visually-hidden">{legend}</legend>
        {valuesOf(words).map((value) => (
          <label key={value} className="check">
            <input
              type="checkbox"
              checked={chosen.includes(value)}
              onChange={(e) => onChange(e.target.checked ? [...chosen, value] : chosen.filter((v) => v !== value))}
            />{' '}
            {words[value]}
          </label>
        ))}
      </fieldset>
    </details>
  );
}
