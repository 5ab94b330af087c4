/** @type {import('jest').Config} */
module.exports = {
  // Node's, with fetch resolving deployments' *.localhost URLs (the edge router) to loopback.
  testEnvironment: '<rootDir>/test/helpers/environment.ts',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.(ts|js)$': ['@swc/jest', { jsc: { target: 'es2022' }, module: { type: 'commonjs' } }] },
  // The OpenAPI validator's parser ships as ES modules only; compile it like our own code.
  transformIgnorePatterns: ['/node_modules/(?!@apidevtools/)'],
  globalSetup: '<rootDir>/test/helpers/global-setup.ts',
  globalTeardown: '<rootDir>/test/helpers/global-teardown.ts',
  // Integration tests share one Docker engine and one Temporal server; two workers keep the 2-core CI honest.
  maxWorkers: 2,
  testTimeout: 120_000,
  verbose: true,
};
