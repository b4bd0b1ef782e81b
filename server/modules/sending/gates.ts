/**
 * The campaign options that hold a due contact back before anything is rendered: `stopOnOpen` / `stopOnClick`
 * end its sequence once it opened or clicked (its first such event in the campaign; machine ones are never
 * recorded as firsts), and `verifiedOnly` keeps an address that is not verified `valid` waiting. Read once per
 * claim for its due contacts, and for one contact by the preview.
 */
import type { Executor } from '../../db';
import type { EventService } from '../events';

/** Why a contact waits: the campaign sends only to addresses verified `valid`, and this one is not (yet). */
export const NOT_VERIFIED = 'not_verified';
/** A contact waiting for verification is looked at again after this long (a verification meanwhile lets it go). */
export const VERIFY_RECHECK_MS = 3_600_000;

export type StopReason = 'stopped_on_open' | 'stopped_on_click';

/** Which addresses a fresh verification found `valid` (the verification module implements it). */
export interface VerifiedAddresses {
  validAmong(db: Executor, emails: string[]): Promise<Set<string>>;
}

export interface GatedCampaign {
  id: string;
  workspace_id: string;
  stop_on_open: boolean;
  stop_on_click: boolean;
  verified_only: boolean;
}

export interface GatedContact {
  contact_id: string;
  email: string;
  /** The step it is at: from 2 on it was mailed, so it may have opened or clicked. */
  step_number: number;
}

export interface Gates {
  stopped(contact: GatedContact): StopReason | undefined;
  unverified(contact: GatedContact): boolean;
}

/** What ContactGates is built from, by name. */
interface ContactGatesDeps {
  events: EventService;
  verified: VerifiedAddresses;
}

export class ContactGates {
  private readonly events: EventService;
  private readonly verified: VerifiedAddresses;

  constructor({ events, verified }: ContactGatesDeps) {
    this.events = events;
    this.verified = verified;
  }

  async read(db: Executor, campaign: GatedCampaign, contacts: GatedContact[]): Promise<Gates> {
    const types = [
      ...(campaign.stop_on_click ? ['clicked' as const] : []),
      ...(campaign.stop_on_open ? ['opened' as const] : []),
    ];
    const mailed = contacts.filter((c) => c.step_number > 1).map((c) => c.contact_id);
    const did =
      types.length && mailed.length
        ? await this.events.contactsWhoDid(db, {
            workspaceId: campaign.workspace_id,
            campaignId: campaign.id,
            types,
            contactIds: mailed,
          })
        : new Map<string, Set<string>>();
    const valid = campaign.verified_only
      ? await this.verified.validAmong(
          db,
          contacts.map((c) => c.email),
        )
      : null;
    return {
      stopped: (c) => {
        const events = did.get(c.contact_id);
        if (events?.has('clicked')) return 'stopped_on_click';
        if (events?.has('opened')) return 'stopped_on_open';
        return undefined;
      },
      unverified: (c) => valid !== null && !valid.has(c.email.trim().toLowerCase()),
    };
  }
}
