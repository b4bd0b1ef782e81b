/**
 * Verifying a webhook delivery (Standard Webhooks): the signature over `webhook-id.webhook-timestamp.body`
 * with the subscription's `whsec_...` secret, and a timestamp within 5 minutes (replays of old deliveries
 * are refused). Pass the raw body exactly as received, before any JSON parsing.
 *
 *   const event = verifyWebhook(rawBody, req.headers, process.env.WEBHOOK_SECRET!);
 *   if (seen.has(event.id)) return; // at least once: drop duplicates by id
 */
import { Webhook } from 'standardwebhooks';
import type { components } from '../generated/api';

export type WebhookEvent = components['schemas']['Event'];

/** Returns the verified event, or throws when the signature or timestamp does not hold. */
export function verifyWebhook(
  rawBody: string | Uint8Array,
  headers: Record<string, string | string[] | undefined>,
  secret: string,
): WebhookEvent {
  const flat: Record<string, string> = {};
  for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature']) {
    const value = headers[name];
    flat[name] = Array.isArray(value) ? value[0] : (value ?? '');
  }
  const body = typeof rawBody === 'string' ? rawBody : new TextDecoder().decode(rawBody);
  return new Webhook(secret).verify(body, flat) as WebhookEvent;
}
