/**
 * Enrichment of one person from what is known of them (a work email, a LinkedIn URL, or a name with a company),
 * through POST /v2/enrich/by-details; the most it can cost (its data options, if someone is found) is shown first.
 */
import { useState, type FormEvent } from 'react';
import type { components } from '../../../client';
import { useEnrich, type EnrichRequest, type PeopleDataOption } from '../hooks/api/leads';
import { Spend, usePrices } from '../components/Cost';
import { DataOptions, textFields } from './search-parts';

const NO_DETAILS = { email: '', linkedinUrl: '', firstName: '', lastName: '', companyDomain: '', companyName: '' };

const REASONS: Record<NonNullable<components['schemas']['EnrichmentResult']['reason']>, string> = {
  noMatch: 'Nobody in the lead database matches.',
  ambiguousMatch: 'Several people match: add an email or LinkedIn URL.',
};

export function EnrichPanel() {
  const [details, setDetails] = useState(NO_DETAILS);
  const [options, setOptions] = useState<PeopleDataOption[]>(['workEmailReveal']);
  const enrich = useEnrich();
  const pricing = usePrices();
  const text = textFields('enrich', details, setDetails);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    // Only what was typed: the API matches by the first complete key it finds.
    const person = Object.fromEntries(
      Object.entries(details)
        .map(([k, v]) => [k, v.trim()])
        .filter(([, v]) => v),
    ) as EnrichRequest['people'][number];
    enrich.mutate({ body: { people: [person], dataOptions: options } });
  };
  const most = pricing ? options.reduce((sum, o) => sum + pricing.prices[o], 0) : null;
  const result = enrich.data?.data.results[0];
  return (
    <form onSubmit={submit} aria-labelledby="enrich-title">
      <h2 id="enrich-title">Enrich a person</h2>
      <p className="hint">
        A work email, a LinkedIn URL, or a first and last name with the company&apos;s domain or name.
      </p>
      <div className="grid">
        {text('email', 'Work email', undefined, 'email')}
        {text('linkedinUrl', 'LinkedIn URL')}
        {text('firstName', 'First name')}
        {text('lastName', 'Last name')}
        {text('companyDomain', 'Company domain')}
        {text('companyName', 'Company name')}
      </div>
      <DataOptions legend="Reveal" chosen={options} onChange={setOptions} />
      <Spend
        most={most}
        what="Enriching this person, if someone matches,"
        action="Enrich"
        pending={enrich.isPending}
        charged={enrich.data?.data.credits}
        error={enrich.error}
      />
      {enrich.data && result ? (
        <div role="status">
          {result.person ? (
            <dl className="details">
              <dt>Name</dt>
              <dd>{result.person.name}</dd>
              <dt>Title</dt>
              <dd>{result.person.title ?? ''}</dd>
              <dt>Company</dt>
              <dd>{result.person.company?.name ?? ''}</dd>
              <dt>Email</dt>
              <dd>{result.person.email ?? 'not revealed or none known'}</dd>
              <dt>Mobile</dt>
              <dd>{result.person.mobilePhone ?? 'not revealed or none known'}</dd>
            </dl>
          ) : (
            <p>{result.reason ? REASONS[result.reason] : ''}</p>
          )}
        </div>
      ) : null}
    </form>
  );
}
