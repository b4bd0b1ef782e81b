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
  // Room for a loaded machine: a file's first start (the embedded database and its migrations) took over 30 s at load 30.
  testTimeout: 90_000,
};
