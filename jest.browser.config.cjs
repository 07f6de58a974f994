// The browser suite (npm run test:browser): headless Debian Chromium driven by playwright-core.
// Kept apart from jest.config.cjs so `npm test` never needs a browser.
const base = require('./jest.config.cjs');
const e2e = base.projects.find((project) => project.displayName === 'e2e');
module.exports = {
  ...e2e,
  displayName: 'browser',
  testMatch: ['<rootDir>/test/browser/**/*.browser-spec.ts'],
  testTimeout: 120000,
};
