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
    // expect.poll's own default is 1 s: on a loaded 2-core machine a run's first token or a page's
    // next frame can take longer than that without anything being wrong (a browser test's Stop
    // button poll failed that way). The same 30 s as Playwright's own waits in these tests.
    expect: { poll: { timeout: 30_000 } },
    hookTimeout: 120_000,
    // e2e files spawn whole stacks; on 2 cores running them all at once starves the services.
    fileParallelism: true,
    maxWorkers: 2,
    globalSetup: ['test/support/global-setup.ts'],
  },
});
