// swc compiles our TypeScript and the ESM-only packages (Nest 12, jose …) to CommonJS for Jest on Node 20.
const swc = {
  jsc: {
    parser: { syntax: 'typescript', decorators: true },
    transform: { legacyDecorator: true, decoratorMetadata: true },
    target: 'es2022',
  },
  module: { type: 'commonjs' },
  sourceMaps: 'inline',
};
const common = {
  testEnvironment: 'node',
  setupFiles: ['<rootDir>/test/setup-env.cjs'],
  transform: { '^.+\\.(t|j|mj)s$': ['@swc/jest', swc] },
  transformIgnorePatterns: [
    '/node_modules/(?!(@nestjs|jose|uid|load-esm|file-type|strtok3|token-types|@tokenizer|@borewit|uint8array-extras|openid-client|oauth4webapi|oidc-provider)/)',
  ],
};
module.exports = {
  // A global option: Jest ignores it inside a project. e2e files boot an app per file.
  testTimeout: 60000,
  // Jest's default is one worker fewer than the cores: one on a two-core laptop. Test files are
  // independent (each has its own database), so every core runs one.
  maxWorkers: '100%',
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/test/unit/**/*.spec.ts'] },
    {
      ...common,
      displayName: 'e2e',
      testMatch: [
        '<rootDir>/test/e2e/**/*.e2e-spec.ts',
        '<rootDir>/test/integration/**/*.spec.ts',
        '<rootDir>/test/contract/**/*.spec.ts',
        '<rootDir>/test/security/**/*.spec.ts',
        '<rootDir>/test/docs/**/*.e2e-spec.ts',
      ],
    },
    // The client package: its sources import siblings as `./x.js` (ES module rules); Jest maps them to the .ts files.
    {
      ...common,
      displayName: 'client',
      testMatch: ['<rootDir>/client/test/**/*.spec.ts'],
      moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
    },
    // The resource-server verifier package, tested against the real service. Its sources import
    // siblings as `./x.js` (ES module rules); Jest maps them to the .ts files.
    {
      ...common,
      displayName: 'verifier',
      testMatch: ['<rootDir>/verifier/test/**/*.e2e-spec.ts', '<rootDir>/verifier/test/**/*.spec.ts'],
      moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
    },
  ],
};
