/** What a bulk job (`POST /v2/contact/bulk`) does to each contact, as its result rows say. */
/** What a bulk job did to one contact: `changed`, or `skipped` with the reason (and what it names). */
export interface Outcome {
  outcome: 'changed' | 'skipped';
  reason: string | null;
  detail: Record<string, unknown> | null;
}
/** Outcomes by contact id; a contact that no longer exists has none. */
export type Outcomes = Map<string, Outcome>;
export const CHANGED: Outcome = { outcome: 'changed', reason: null, detail: null };
export const skipped = (reason: string, detail: Record<string, unknown> | null = null): Outcome => ({
  outcome: 'skipped',
  reason,
  detail,
});
