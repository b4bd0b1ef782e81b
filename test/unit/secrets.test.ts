import { missingSecretKeyWarning } from '../../server/platform/secrets';

describe('the start-up line about a missing SECRET_KEY', () => {
  it('names what will not work on PostgreSQL without a key', () => {
    const line = missingSecretKeyWarning({ secretKey: undefined, databaseUrl: 'postgres://db.internal/outreach' });
    expect(line).toMatch(/^SECRET_KEY is not set: email accounts cannot be connected, webhooks cannot be created/);
  });

  it('is silent with a key, and on the embedded database (which keeps its own)', () => {
    expect(
      missingSecretKeyWarning({ secretKey: 'ab'.repeat(32), databaseUrl: 'postgres://db.internal/outreach' }),
    ).toBeNull();
    expect(missingSecretKeyWarning({ secretKey: undefined, databaseUrl: undefined })).toBeNull();
  });
});
