/**
 * What a contact's message says: its template values and its variant rendered for it (spintax fixed per contact,
 * step and field, then the contact's values, which are never spun). The engine's claim and the preview render
 * through here, so a preview shows the words that will be sent.
 */
import { spin } from '../../text/spintax';
import { renderBody, renderTemplate, type RenderedBody, type TemplateValues } from './render';
import type { DueContact } from './store';

export type ContactFields = Pick<
  DueContact,
  | 'email'
  | 'first_name'
  | 'last_name'
  | 'company_name'
  | 'job_title'
  | 'phone'
  | 'website'
  | 'linkedin_url'
  | 'custom_variables'
>;

export function templateValues(c: ContactFields): TemplateValues {
  const values: TemplateValues = {};
  for (const [k, v] of Object.entries(c.custom_variables ?? {})) if (v !== null) values[k] = String(v);
  Object.assign(values, {
    firstName: c.first_name ?? undefined,
    lastName: c.last_name ?? undefined,
    companyName: c.company_name ?? undefined,
    jobTitle: c.job_title ?? undefined,
    email: c.email,
    phone: c.phone ?? undefined,
    website: c.website ?? undefined,
    linkedinUrl: c.linkedin_url ?? undefined,
  });
  return values;
}

export type RenderedVariant =
  | {
      ok: true;
      /** undefined when it answers in the thread (the reply subject rule gives it) */ subject?: string;
      body: RenderedBody;
    }
  | { ok: false; missing: string };

export function renderVariant(
  variant: { subject: string; body: string },
  at: { contactId: string; stepId: string },
  values: TemplateValues,
  inThread: boolean,
): RenderedVariant {
  const key = `${at.contactId}:${at.stepId}`;
  const subject = inThread ? undefined : renderTemplate(spin(variant.subject, `${key}:subject`), values);
  const body = renderBody(spin(variant.body, `${key}:body`), values);
  if (subject && !subject.ok) return subject;
  if (!body.ok) return body;
  return { ok: true, subject: subject?.text, body: body.body };
}
