/**
 * Types for what tests read from raw `t.fetch` responses (requests the typed client cannot send: bad JSON, CSV
 * uploads, wrong types). Tests run with response validation on, so a body the server sends has the spec's shape:
 * the operation's success body, or an error body, as the status says.
 */
import type { HttpMethod } from 'openapi-typescript-helpers';
import type { components, paths, webhooks } from '../../generated/api';
import type { SuccessBody } from '../../server/http/route';

/** The success body of the operation at `P` and `M`. */
export type Success<P extends keyof paths, M extends Extract<HttpMethod, 'get' | 'post' | 'put' | 'delete'>> = SuccessBody<P, M>;

/** A `/v2` error body. */
export type ErrorBody = components['schemas']['ErrorV2'];

/** A `/v1` error body: `error` alone. */
export type V1ErrorBody = components['schemas']['ErrorV1'];

/** What a subscription to the webhook event `E` receives, as the spec's `webhooks` describe it. */
export type WebhookBody<E extends keyof webhooks> = webhooks[E]['post']['requestBody']['content']['application/json'];

/** A raw response's JSON as `T` (a `Success<...>`, `ErrorBody` or `V1ErrorBody`, as the status and version say). */
export const readJson = async <T>(res: Response): Promise<T> => (await res.json()) as T;
