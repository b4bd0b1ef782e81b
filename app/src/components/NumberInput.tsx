/** A number field whose empty value is no number (`undefined`), never 0. */
import type { InputHTMLAttributes } from 'react';

type Props = Omit<InputHTMLAttributes<HTMLInputElement>, 'type' | 'value' | 'onChange'> & {
  value: number | null | undefined;
  onChange: (value: number | undefined) => void;
};

export function NumberInput({ value, onChange, ...props }: Props) {
  return (
    <input
      {...props}
      type="number"
      value={value ?? ''}
      onChange={(e) => onChange(e.target.value ? Number(e.target.value) : undefined)}
    />
  );
}
