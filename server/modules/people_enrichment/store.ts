/**
 * Look-ups of people by the enrichment keys, batched per rule (one query for all the emails of a
 * request, one for all the LinkedIn URLs, one for all the names), through the leads migration's
 * lower(...) indexes. Callers pass keys already lower-cased.
 */
import type { Db } from '../../db';
import { PERSON_COLUMNS, type PersonRow } from '../leads/model';

const placeholders = (values: unknown[]) => values.map(() => '?').join(', ');

export class EnrichmentStore {
  async byWorkEmails(db: Db, emails: string[]): Promise<PersonRow[]> {
    if (!emails.length) return [];
    return db('people').select(PERSON_COLUMNS).whereRaw(`lower(work_email) IN (${placeholders(emails)})`, emails);
  }

  async byLinkedinUrls(db: Db, urls: string[]): Promise<PersonRow[]> {
    if (!urls.length) return [];
    return db('people').select(PERSON_COLUMNS).whereRaw(`lower(linkedin_url) IN (${placeholders(urls)})`, urls);
  }

  async byNames(db: Db, names: { first: string; last: string }[]): Promise<PersonRow[]> {
    if (!names.length) return [];
    const tuples = names.map(() => '(?, ?)').join(', ');
    return db('people')
      .select(PERSON_COLUMNS)
      .whereRaw(`(lower(last_name), lower(first_name)) IN (${tuples})`, names.flatMap((n) => [n.last, n.first]));
  }
}
