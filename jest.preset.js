// Shared jest settings: TypeScript through swc (fast, no type-check; `npm run typecheck` does that).
/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022' }, module: { type: 'commonjs' } }] },
  testMatch: ['<rootDir>/src/**/*.test.ts', '<rootDir>/test/**/*.test.ts'],
  moduleFileExtensions: ['ts', 'js', 'json'],
  // Integration tests start real servers and databases on a 2-core machine; units finish far below this.
  testTimeout: 30_000,
};
