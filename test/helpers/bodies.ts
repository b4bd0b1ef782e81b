/**
 * Types for what tests read from raw `t.fetch` responses (requests the typed client cannot send: bad JSON, CSV
 * uploads, wrong types). Tests run with response validation on, so a body the server sends has the spec's shape:
 * the operation's success body, or an error body, as the status says. Also the JSON a webhook receiver got.
 */
import type { HttpMethod } from 'openapi-typescript-helpers';
import type { components, paths, webhooks } from '../../generated/api';
import type { ReceivedHook } from './webhook-receiver';
import type { SuccessBody } from '../../server/http/route';

/** The success body of the operation at `P` and `M`. */
export type Success<
  P extends keyof paths,
  M extends Extract<HttpMethod, 'get' | 'post' | 'put' | 'delete'>,
> = SuccessBody<P, M>;

/** A `/v2` error body. */
export type ErrorBody = components['schemas']['ErrorV2'];

/** A `/v1` error body: `error` alone. */
export type V1ErrorBody = components['schemas']['ErrorV1'];

/** A raw response's JSON as `T` (a `Success<...>`, `ErrorBody` or `V1ErrorBody`, as the status and version say). */
export const readJson = async <T>(res: Response): Promise<T> => (await res.json()) as T;

/** What a subscription to the event types `T` receives: the spec's webhook payload of each of them. */
export type WebhookPayload<T extends keyof webhooks> =
  webhooks[T]['post']['requestBody']['content']['application/json'];

/** A received webhook's JSON as the payload of one of the event types `T` its subscription names. */
export const readHook = <T extends keyof webhooks>(hook: ReceivedHook): WebhookPayload<T> =>
  JSON.parse(hook.body) as WebhookPayload<T>;
