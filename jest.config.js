/** Tests run through real HTTP on the real app; see test/helpers/server.ts. */
const { availableParallelism } = require('node:os');

module.exports = {
  // Two files at once at least: they mostly wait on servers (PostgreSQL, SMTP, IMAP, child processes), so on
  // two cores two workers took the suite from 812 to 446 s on PostgreSQL (Jest's default is one per core but one).
  maxWorkers: Math.max(2, availableParallelism() - 1),
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['ts-jest', { diagnostics: false }] },
  globalSetup: '<rootDir>/test/helpers/global-setup.ts',
  globalTeardown: '<rootDir>/test/helpers/global-teardown.ts',
  setupFilesAfterEnv: ['<rootDir>/test/helpers/one-query-per-connection.ts'],
  testTimeout: 30000,
};
