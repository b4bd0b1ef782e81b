/**
 * `npm run example`: the client against a running server. Set API_KEY, and BASE_URL (default: the
 * local environment) or ENVIRONMENT (local, staging, production):
 *
 *   API_KEY=lr_... BASE_URL=http://localhost:3000 npm run example
 *
 * It checks the key, reads the workspace's quota and searches the lead database for people (one
 * page of 5, revealing work emails: this spends credits for people not revealed before).
 */
import { ApiRequestError, createClient, unwrap, type Environment } from './index';

async function main(): Promise<void> {
  const apiKey = process.env.API_KEY;
  if (!apiKey) throw new Error('Set API_KEY (and BASE_URL or ENVIRONMENT).');
  const api = process.env.BASE_URL
    ? createClient({ apiKey, baseUrl: process.env.BASE_URL })
    : createClient({ apiKey, environment: (process.env.ENVIRONMENT ?? 'local') as Environment });

  const auth = unwrap(await api.GET('/v1/authenticate'));
  console.log(`Authenticated: workspace "${auth.data.workspace.name}" (${auth.data.workspace.id})`);

  const { limits } = unwrap(await api.GET('/v1/ratelimit/limits')).data;
  console.log(`Quota: ${limits.perMin}/minute, ${limits.perHour}/hour, ${limits.perDay}/day`);

  const search = unwrap(
    await api.POST('/v1/mixed_people/search', {
      body: { titles: ['sales'], page: 1, perPage: 5, dataOptions: ['workEmailReveal'] },
    }),
  );
  const { pagination, credits } = search.data;
  console.log(`People search: ${pagination.totalEntries} matches, page ${pagination.page} of ${pagination.totalPages}`);
  for (const person of search.data.items) {
    console.log(`  ${person.name} - ${person.title ?? 'no title'} - ${person.email ?? '(no work email)'}`);
  }
  console.log(`Credits: ${credits.used} used, ${credits.remaining} remaining`);
}

main().catch((err: unknown) => {
  if (err instanceof ApiRequestError)
    console.error(`API error ${err.status}: ${err.message} (request id ${err.requestId ?? 'none'})`);
  else console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
