import { NON_OUTPUT_WRITE_TOOL_NAMES, WRITE_TOOL_NAMES } from '@quill/contracts';
import { describe, expect, it } from 'vitest';
import { unclassifiedWriteTools } from '../src/billing-output.ts';
import { FILE_WRITE_TOOL_NAMES, TOOL_SPECS } from '../src/index.ts';

describe('billing classification of file-writing tools', () => {
  it('classifies every tool with writesFiles: true (add new write tools to WRITE_TOOL_NAMES or NON_OUTPUT_WRITE_TOOL_NAMES)', () => {
    expect(unclassifiedWriteTools()).toEqual([]);
    for (const name of FILE_WRITE_TOOL_NAMES) {
      expect(
        WRITE_TOOL_NAMES.includes(name) || NON_OUTPUT_WRITE_TOOL_NAMES.includes(name),
        `${name} is not classified for billing`,
      ).toBe(true);
    }
  });

  it('lists no read-only tool, and each tool in exactly one list', () => {
    for (const name of [...WRITE_TOOL_NAMES, ...NON_OUTPUT_WRITE_TOOL_NAMES]) {
      // A listed tool may still be landing; once registered it must be a file-writing tool.
      if (TOOL_SPECS[name]) expect(TOOL_SPECS[name].writesFiles, `${name} does not write files`).toBe(true);
    }
    const overlap = WRITE_TOOL_NAMES.filter((name) => NON_OUTPUT_WRITE_TOOL_NAMES.includes(name));
    expect(overlap).toEqual([]);
  });

  it('does not count create_file (an empty file) as output by itself', () => {
    expect(WRITE_TOOL_NAMES).not.toContain('create_file');
  });
});
