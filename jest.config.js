/** Jest in ESM mode: Nest 12 ships ESM only (see docs/development.md). */
export default {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  roots: ['<rootDir>/test', '<rootDir>/src', '<rootDir>/projections'],
  testMatch: ['**/*.test.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: {
    '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: 'tsconfig.json' }],
  },
  testTimeout: 30000,
  maxWorkers: 2,
};
