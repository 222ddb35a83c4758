import { NON_OUTPUT_WRITE_TOOL_NAMES, WRITE_TOOL_NAMES } from '@quill/contracts';
import { TOOL_SPECS } from './registry.ts';

/**
 * Registered tools with `writesFiles: true` that neither of billing's lists in
 * libs/contracts/src/tool-billing.ts classifies (must be empty).
 */
export function unclassifiedWriteTools(): string[] {
  const classified = new Set([...WRITE_TOOL_NAMES, ...NON_OUTPUT_WRITE_TOOL_NAMES]);
  return Object.values(TOOL_SPECS)
    .filter((spec) => spec.writesFiles && !classified.has(spec.name))
    .map((spec) => spec.name);
}
