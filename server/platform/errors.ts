/**
 * The errors domain code throws, in the domain's words: what kind of wrong it is, a code from the spec's list,
 * a message, and the fields at fault. They know no HTTP: server/http/error-middleware.ts gives each kind its
 * status and writes the v1 or v2 body; the CLI and the worker read them as they are.
 */
import type { components } from '../../generated/api';

/** The spec's machine-readable error codes (ErrorV2.code). */
export type ErrorCode = components['schemas']['ErrorV2']['code'];

/** Which part of the input names the field: its body, its query, its path or a header. */
export type FieldLocation = 'body' | 'query' | 'path' | 'header';

/** One field at fault: its path within its location (`contacts.3.email`), what is wrong, and a code for it. */
export interface FieldProblem {
  field: string;
  location: FieldLocation;
  message: string;
  code: string;
}

/**
 * invalid: the input breaks a rule; paymentRequired: not enough credits, nothing charged; forbidden: not allowed
 * for this workspace; notFound: no such thing of the caller's (another workspace's included); conflict: the
 * state forbids it, or it exists already; tooLarge: more input than a limit takes; unavailable: a service this
 * depends on (an identity provider) cannot be reached now, try again later.
 */
export type ErrorKind =
  'invalid' | 'paymentRequired' | 'forbidden' | 'notFound' | 'conflict' | 'tooLarge' | 'unavailable';

export class DomainError extends Error {
  constructor(
    readonly kind: ErrorKind,
    readonly code: ErrorCode,
    message: string,
    readonly details: FieldProblem[] = [],
  ) {
    super(message);
    this.name = 'DomainError';
  }
}

/** A problem with one field: `detail('contacts.3.email', 'is not a valid email', 'format')`. */
export function detail(field: string, message: string, code: string, location: FieldLocation = 'body'): FieldProblem {
  return { field, location, message, code };
}

/** `body.contacts.3.email`: a field as the caller names it, its location first. */
export const fieldName = (problem: Pick<FieldProblem, 'field' | 'location'>) => `${problem.location}.${problem.field}`;

export const invalid = (message: string, details: FieldProblem[] = [], code: ErrorCode = 'validation_error') =>
  new DomainError('invalid', code, message, details);
export const paymentRequired = (message: string) => new DomainError('paymentRequired', 'insufficient_credits', message);
export const forbidden = (message: string) => new DomainError('forbidden', 'forbidden', message);
export const notFound = (message: string, details: FieldProblem[] = []) =>
  new DomainError('notFound', 'not_found', message, details);
export const conflict = (message: string, details: FieldProblem[] = []) =>
  new DomainError('conflict', 'conflict', message, details);
export const tooLarge = (message: string) => new DomainError('tooLarge', 'payload_too_large', message);
export const unavailable = (message: string) => new DomainError('unavailable', 'service_unavailable', message);
