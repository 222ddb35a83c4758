import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: [
      'apps/*/test/**/*.test.ts',
      'libs/*/test/**/*.test.ts',
      'services/*/test/**/*.test.ts',
      'test/**/*.test.ts',
    ],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // e2e files spawn whole stacks; on 2 cores running them all at once starves the services.
    fileParallelism: true,
    maxWorkers: 2,
    globalSetup: ['test/support/global-setup.ts'],
  },
});
