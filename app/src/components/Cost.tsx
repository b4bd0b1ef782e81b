/**
 * What a request that spends credits will cost at most, said before it runs: the deployment's prices and the
 * balance (GET /v2/usage) against what the request would reveal. Data already revealed to the workspace, or not
 * known, costs nothing, so the charge the answer reports may be lower, never higher.
 */
import { useCan } from '../session';
import { useCredits, type Prices } from '../hooks/api/leads';
import { ErrorNotice, Loading } from './states';

/** The prices and the balance, or null while they load or when the key cannot read them. */
export function usePrices(): { prices: Prices; balance: number } | null {
  const credits = useCredits(useCan('usage:read'));
  return credits.data ? { prices: credits.data.prices, balance: credits.data.balance } : null;
}

function CostNotice({ most, what }: { most: number | null; what: string }) {
  const canRead = useCan('usage:read');
  const credits = useCredits(canRead);
  if (!canRead)
    return (
      <p className="hint">
        The prices come with the workspace&apos;s usage, which this key may not read (usage:read); the answer says what
        it charged.
      </p>
    );
  if (credits.error) return <ErrorNotice error={credits.error} />;
  if (most === null || !credits.data) return <Loading what="the prices" />;
  const { balance } = credits.data;
  return (
    <p className={most > balance ? 'cost over' : 'cost'} data-cost={most}>
      {what} costs at most <strong>{plural(most, 'credit')}</strong> (what this workspace revealed before, or what is
      not known, is free); the balance is {plural(balance, 'credit')}.
      {most > balance ? ' That may not be enough: if so, the API refuses it and charges nothing.' : ''}
    </p>
  );
}

/** `1 credit`, `25 credits`; `many` for a word whose plural is not the word and an s. */
export const plural = (n: number, one: string, many = `${one}s`) => `${n.toLocaleString()} ${n === 1 ? one : many}`;

/**
 * A request that spends credits: the most it can cost, the button that sends it (a form's submit button without
 * `onSpend`), then what the answer charged and what is left, or the API's refusal.
 */
export function Spend({
  most,
  what,
  action,
  onSpend,
  pending,
  disabled = false,
  charged,
  error,
}: {
  most: number | null;
  what: string;
  action: string;
  onSpend?: () => void;
  pending: boolean;
  disabled?: boolean;
  charged: { used: number; remaining: number } | undefined;
  error: unknown;
}) {
  return (
    <>
      <CostNotice most={most} what={what} />
      <button type={onSpend ? 'button' : 'submit'} disabled={pending || disabled} onClick={onSpend}>
        {most === null ? action : `${action} for at most ${plural(most, 'credit')}`}
      </button>
      {charged ? (
        <p role="status">
          Charged {plural(charged.used, 'credit')}; {plural(charged.remaining, 'credit')} left.
        </p>
      ) : null}
      <ErrorNotice error={error} />
    </>
  );
}
