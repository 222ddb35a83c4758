/**
 * Exports of a lib's entry (`src/index.ts`, and libs/db's `@quill/db/<owner>` entries) that nothing
 * outside the lib imports yet, kept on purpose, each with its reason. test/arch/unused-exports.test.ts
 * fails on any other such export, and on an entry here that is no longer exported or is imported
 * now (see docs/architecture.md "Boundaries").
 *
 * Empty today. libs/contracts re-exports with `export *` only the modules whose every export is
 * used outside it; the others are re-exported by name (libs/contracts/src/index.ts), so a name
 * only contracts itself uses (a response schema the route table and the OpenAPI document read, a
 * helper its tests import from the module) stays out of the public surface. A new contracts export
 * another package needs is added to that list.
 */
export const ALLOWED_UNUSED_EXPORTS: Record<string, readonly string[]> = {};
