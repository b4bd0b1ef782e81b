/**
 * What recipients reach without an API key: unsubscribe (a page and RFC 8058 one-click), the open pixel
 * and click redirects. Links carry signed tokens naming the message they came from (TokenSigner), so
 * nothing else can be unsubscribed, counted or redirected to.
 *
 * Hosts: links use the message's verified tracking domain (`MessageRef.trackingHost`, over https) or the
 * default host (PUBLIC_URL). A request is answered only on the default host, or on a verified tracking domain
 * for tokens of that domain's own workspace (`HostScope`); any other host is refused.
 *
 * Machine opens: mail-privacy proxies and security scanners fetch pixels and links on their own. An
 * event within PREFETCH_SECONDS of the send, or from a known proxy/scanner user agent, is recorded but
 * flagged, and analytics leave flagged events out of unique rates.
 */
import type { Clock } from '../../platform/clock';
import type { Db, Executor } from '../../db';
import type { ContactService } from '../contact';
import type { SubsequenceTriggers } from '../campaign';
import type { EventService } from '../events';
import type { MessageLinks, MessageRef } from '../sending';
import type { SuppressionService } from '../suppression';
import type { TokenSigner } from './tokens';

/** Seconds after a send within which an open or click is taken as a prefetch. */
export const PREFETCH_SECONDS = 10;
const MACHINE_AGENTS =
  /GoogleImageProxy|YahooMailProxy|Outlook-iOS-Android|Barracuda|Mimecast|Proofpoint|ms-office|Microsoft Office Protocol|python-requests|curl\/|bot\b|crawler|spider|scanner/i;

/** The mail a removal is about (the message whose link was used, or that the reply answered). */
export interface RemovalRef {
  workspaceId: string;
  contactId: string;
  campaignId: string | null;
  stepId: string | null;
  variantId: string | null;
  accountId: string | null;
  messageId: string | null;
}

/** Whose tokens a request's host serves: any workspace's on the default host, one workspace's on its tracking domain. */
export interface HostScope {
  workspaceId: string | null;
}

/** Which workspace a verified tracking domain belongs to (the tracking-domain service). */
export type HostOwner = (host: string) => Promise<string | null>;

/** What a token may be used for: unsubscribe, open pixel, click. */
type Purpose = 'u' | 'o' | 'c';

/** The compact signed form of a MessageRef (plus a click target), and what it is for. */
interface LinkToken {
  p?: Purpose;
  w: string;
  m: string;
  c: string;
  k: string;
  s: string;
  v: string;
  a: string;
  t: number;
  u?: string;
}

const toToken = (p: Purpose, r: MessageRef, url?: string): LinkToken => ({
  p,
  w: r.workspaceId,
  m: r.messageId,
  c: r.contactId,
  k: r.campaignId,
  s: r.stepId,
  v: r.variantId,
  a: r.accountId,
  t: r.builtAt.getTime(),
  ...(url ? { u: url } : {}),
});

// An absolute web link, or a protocol-relative one (`//host/x`, which a mail client opens over https).
const HREF = /(<a\b[^>]*?\bhref\s*=\s*)(["'])((?:https?:)?\/\/[^"'<>\s]+)\2/gi;
const unescapeAttr = (s: string) => s.replace(/&amp;/g, '&');
const absolute = (url: string) => (url.startsWith('//') ? `https:${url}` : url);

/** What TrackingService is built from, by name. */
export interface TrackingServiceDeps {
  db: Db;
  signer: TokenSigner;
  publicUrl: string;
  contacts: ContactService;
  suppression: SuppressionService;
  events: EventService;
  clock: Clock;
  hostOwner: HostOwner;
  triggers: SubsequenceTriggers;
}

export class TrackingService implements MessageLinks {
  private readonly db: Db;
  private readonly signer: TokenSigner;
  private readonly publicUrl: string;
  private readonly contacts: ContactService;
  private readonly suppression: SuppressionService;
  private readonly events: EventService;
  private readonly clock: Clock;
  private readonly hostOwner: HostOwner;
  private readonly triggers: SubsequenceTriggers;

  constructor({
    db,
    signer,
    publicUrl,
    contacts,
    suppression,
    events,
    clock,
    hostOwner,
    triggers,
  }: TrackingServiceDeps) {
    this.db = db;
    this.signer = signer;
    this.publicUrl = publicUrl;
    this.contacts = contacts;
    this.suppression = suppression;
    this.events = events;
    this.clock = clock;
    this.hostOwner = hostOwner;
    this.triggers = triggers;
  }

  private base(ref: MessageRef): string {
    return ref.trackingHost ? `https://${ref.trackingHost}` : this.publicUrl;
  }

  linksFor(ref: MessageRef) {
    const base = this.base(ref);
    const unsubscribeUrl = `${base}/u/${this.signer.sign(toToken('u', ref))}`;
    return {
      unsubscribeUrl,
      listUnsubscribe: `<${unsubscribeUrl}>`,
      openPixelUrl: `${base}/o/${this.signer.sign(toToken('o', ref))}.gif`,
    };
  }

  rewriteLinks(html: string, ref: MessageRef): string {
    const base = this.base(ref);
    return html.replace(HREF, (_all, start: string, quote: string, url: string) => {
      const target = absolute(unescapeAttr(url));
      // The unsubscribe link stays as it is: it is ours already.
      if (target.startsWith(`${base}/u/`)) return `${start}${quote}${url}${quote}`;
      return `${start}${quote}${base}/c/${this.signer.sign(toToken('c', ref, target))}${quote}`;
    });
  }

  /**
   * Whose tokens a request's `Host` serves: every workspace's on the default host (PUBLIC_URL's), one
   * workspace's on its verified tracking domain; null (refused) for any other host.
   */
  async scopeOf(hostHeader: string | undefined): Promise<HostScope | null> {
    if (!hostHeader) return null;
    // The port is not part of the name (a proxy in front, or the default host on a local port).
    const host = hostHeader.replace(/:\d+$/, '').toLowerCase().replace(/\.$/, '');
    if (host === new URL(this.publicUrl).hostname.toLowerCase()) return { workspaceId: null };
    const workspaceId = await this.hostOwner(host);
    return workspaceId ? { workspaceId } : null;
  }

  /**
   * The token's payload when it was signed here for `purpose`. Tokens from before purposes were signed
   * (mail already delivered) carry none: one with a click target is a click token, one without served as
   * both the unsubscribe link and the pixel, so its unsubscribe link keeps working.
   */
  private read(token: string, purpose: Purpose, scope: HostScope): LinkToken | null {
    const t = this.signer.verify<LinkToken>(token);
    if (!t || (scope.workspaceId !== null && t.w !== scope.workspaceId)) return null;
    const p = t.p ?? (t.u ? 'c' : purpose === 'c' ? undefined : purpose);
    return p === purpose ? t : null;
  }

  /** Whether the token is a valid unsubscribe token (for the confirmation page). */
  isValid(token: string, scope: HostScope): boolean {
    return this.read(token, 'u', scope) !== null;
  }

  /**
   * Unsubscribes the contact: status `unsubscribed`, the address suppressed for the workspace and
   * `contact.unsubscribed` recorded, in one transaction. False for a bad token; a repeat changes nothing.
   */
  async unsubscribe(token: string, source: 'link' | 'oneClick', scope: HostScope): Promise<boolean> {
    const t = this.read(token, 'u', scope);
    if (!t) return false;
    await this.db.transaction((trx) =>
      this.unsubscribeIn(
        trx,
        {
          workspaceId: t.w,
          campaignId: t.k,
          stepId: t.s,
          variantId: t.v,
          accountId: t.a,
          contactId: t.c,
          messageId: t.m,
        },
        source,
      ),
    );
    return true;
  }

  /**
   * The one removal path, in the caller's transaction: the link, one-click and a reply asking to be removed
   * (`source: reply`, with the reply's id) all unsubscribe, suppress and record alike. False when the
   * contact was already unsubscribed (or is gone): a repeat changes nothing.
   */
  async unsubscribeIn(
    trx: Executor,
    ref: RemovalRef,
    source: 'link' | 'oneClick' | 'reply',
    inboundMessageId?: string,
  ): Promise<boolean> {
    const contact = await this.contacts.unsubscribeForMail(trx, ref.workspaceId, ref.contactId);
    if (!contact) return false;
    await this.suppression.suppress(trx, ref.workspaceId, [{ value: contact.email, reason: 'unsubscribed' }]);
    await this.events.record(trx, {
      workspaceId: ref.workspaceId,
      type: 'contact.unsubscribed',
      data: {
        campaignId: ref.campaignId ?? contact.campaign_id,
        contactId: ref.contactId,
        email: contact.email,
        source,
        ...(inboundMessageId ? { inboundMessageId } : {}),
      },
      mail: {
        campaignId: ref.campaignId,
        stepId: ref.stepId,
        variantId: ref.variantId,
        accountId: ref.accountId,
        contactId: ref.contactId,
        messageId: ref.messageId,
      },
    });
    return true;
  }

  /** Records an open; false for a bad token. */
  async open(token: string, userAgent: string | undefined, scope: HostScope): Promise<boolean> {
    return this.recordView(this.read(token, 'o', scope), 'email.opened', userAgent);
  }

  /** Records a click and answers where to send the browser; null for a bad token or one with no target. */
  async click(token: string, userAgent: string | undefined, scope: HostScope): Promise<string | null> {
    const t = this.read(token, 'c', scope);
    if (!t?.u || !/^https?:\/\//i.test(t.u)) return null;
    await this.recordView(t, 'email.clicked', userAgent);
    return t.u;
  }

  private async recordView(
    t: LinkToken | null,
    type: 'email.opened' | 'email.clicked',
    userAgent: string | undefined,
  ): Promise<boolean> {
    if (!t) return false;
    const now = this.clock.now();
    const flagged = now.getTime() - t.t < PREFETCH_SECONDS * 1000 || MACHINE_AGENTS.test(userAgent ?? '');
    await this.db.transaction(async (trx) => {
      const contact = await this.contacts.lockForMail(trx, t.w, t.c);
      if (!contact) return;
      const mail = {
        campaignId: t.k,
        stepId: t.s,
        variantId: t.v,
        accountId: t.a,
        contactId: t.c,
        messageId: t.m,
        flagged,
      };
      const data = {
        messageId: t.m,
        campaignId: t.k,
        contactId: t.c,
        accountId: t.a,
        stepId: t.s,
        variantId: t.v,
        email: contact.email,
        flagged,
        ...(type === 'email.clicked' ? { url: t.u } : {}),
      };
      await this.events.record(trx, { workspaceId: t.w, type, occurredAt: now, data, mail });
      // A prefetch or a machine's read is no person's open or click: it moves no one into a subsequence.
      if (!flagged)
        await this.triggers.fire(trx, {
          type: type === 'email.opened' ? 'opened' : 'clicked',
          workspaceId: t.w,
          campaignId: contact.campaign_id,
          contactId: t.c,
          stepId: t.s,
        });
    });
    return true;
  }
}
