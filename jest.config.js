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
  // A test's (and a hook's) outer deadline. Each file loads the service's modules afresh in its
  // own VM context (ESM mode), and a test app's start or a 2 MiB import took over 30 s with the
  // 2 cores at load 3-13 (session 25's runs): a deadline, not a window, so a passing test costs
  // nothing more and a hung one fails 30 s later.
  testTimeout: 60000,
  maxWorkers: 2,
};
