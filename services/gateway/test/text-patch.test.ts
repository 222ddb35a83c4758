import { applyPatch, createTwoFilesPatch } from 'diff';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { filePatch, MAX_PATCH_EDITS, replacementPatch } from '../src/text-patch.ts';

// Lines of two disjoint alphabets: no line of one text can appear in the other.
const text = (alphabet: string) =>
  fc
    .tuple(
      fc.array(fc.string({ unit: fc.constantFrom(...alphabet), minLength: 1, maxLength: 6 }), {
        maxLength: 6,
      }),
      fc.boolean(),
    )
    .map(([lines, trailingNewline]) =>
      lines.length === 0 ? '' : lines.join('\n') + (trailingNewline ? '\n' : ''),
    );

describe('file patches', () => {
  it('writes a whole-text replacement exactly as the diff library writes one', () => {
    fc.assert(
      fc.property(text('abc'), text('xyz'), (before, after) => {
        fc.pre(before !== after);
        expect(replacementPatch('a@1', 'a@2', before, after)).toBe(
          createTwoFilesPatch('a@1', 'a@2', before, after),
        );
      }),
      { numRuns: 300 },
    );
  });

  it('gives the smallest patch for an edit, and a replacement that still applies past the bound', () => {
    const chapter = Array.from({ length: 3_000 }, (_, index) => `第${index}段。`).join('\n');
    const edited = chapter.replace('第1500段。', '第1500段，改过。');
    const small = filePatch('c@1', 'c@2', chapter, edited);
    expect(small).toContain('-第1500段。\n+第1500段，改过。');
    expect(small.split('\n').length).toBeLessThan(20);
    expect(applyPatch(chapter, small)).toBe(edited);

    // Every line different: more edits than the bound, one hunk replacing everything.
    const rewritten = Array.from({ length: MAX_PATCH_EDITS + 10 }, (_, index) => `新${index}`).join('\n');
    const replaced = filePatch('c@1', 'c@3', chapter, rewritten);
    expect(replaced).toBe(replacementPatch('c@1', 'c@3', chapter, rewritten));
    expect(applyPatch(chapter, replaced)).toBe(rewritten);
  });
});
