/**
 * Jest in ESM mode: Nest 12 ships ESM only (see docs/development.md).
 * content-disposition 3 is ESM-only but required() by @fastify/static; jest (unlike Node 20.19+)
 * cannot require ESM, so that one package is compiled to CommonJS for tests.
 */
const esmOnlyRequiredPackages = ['content-disposition'];

export default {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  roots: ['<rootDir>/test', '<rootDir>/src', '<rootDir>/projections'],
  testMatch: ['**/*.test.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transformIgnorePatterns: [`/node_modules/(?!(${esmOnlyRequiredPackages.join('|')})/)`],
  transform: {
    '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: 'tsconfig.json' }],
    [`/node_modules/(${esmOnlyRequiredPackages.join('|')})/.+\\.js$`]: [
      'ts-jest',
      { useESM: false, tsconfig: { allowJs: true, module: 'commonjs', moduleResolution: 'node10', isolatedModules: true, verbatimModuleSyntax: false } },
    ],
  },
  testTimeout: 30000,
  maxWorkers: 2,
};
