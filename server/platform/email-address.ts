/**
 * Rules about email addresses that several modules share, written once: the syntax the API accepts
 * and the domain of an address.
 */

/**
 * The `format: email` check of the request validator (ajv-formats, full mode), with RFC 5321's
 * lengths: an address this accepts is also accepted wherever the API takes `format: email`.
 */
const EMAIL =
  /^[a-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[a-z0-9!#$%&'*+/=?^_`{|}~-]+)*@(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/i;

export function isValidEmail(email: string): boolean {
  if (email.length > 254 || !EMAIL.test(email)) return false;
  const [local, domain] = email.split('@');
  return local.length <= 64 && domain.split('.').every((label) => label.length <= 63);
}

/** What follows the last `@`, as written (callers lower-case it when they compare). */
export const domainOf = (email: string): string => email.slice(email.lastIndexOf('@') + 1);
