const { compilerOptions } = require('./tsconfig.json');

/** @type {import('jest').Config} */
module.exports = {
  // Node's, with fetch resolving deployments' *.localhost URLs (the edge router) to loopback.
  testEnvironment: '<rootDir>/test/helpers/environment.ts',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  // swc rewrites our folder aliases (tsconfig.json "paths") as it compiles, so they resolve wherever jest loads a
  // file: in a test's module registry and in the environment and global setup, which jest loads outside it.
  transform: {
    '^.+\\.(ts|js)$': [
      '@swc/jest',
      { jsc: { target: 'es2022', baseUrl: __dirname, paths: compilerOptions.paths }, module: { type: 'commonjs' } },
    ],
  },
  // A require() at run time (swc rewrites only imports) finds the same folders.
  moduleNameMapper: {
    [`^@(${Object.keys(compilerOptions.paths)
      .map((k) => k.slice(1, -2))
      .join('|')})/(.*)$`]: '<rootDir>/$1/$2',
  },
  // The OpenAPI validator's parser ships as ES modules only; compile it like our own code.
  transformIgnorePatterns: ['/node_modules/(?!@apidevtools/)'],
  globalSetup: '<rootDir>/test/helpers/global-setup.ts',
  globalTeardown: '<rootDir>/test/helpers/global-teardown.ts',
  // Integration tests share one Docker engine and one Temporal server; two workers keep the 2-core CI honest.
  maxWorkers: 2,
  testTimeout: 120_000,
  verbose: true,
};
