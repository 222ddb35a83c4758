import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CONFIG_KEYS, ConfigSchema } from '../src/index.ts';

// The README's configuration table is the operator's reference: every setting must be in it.
const readme = readFileSync(new URL('../../../README.md', import.meta.url), 'utf8');

describe('README configuration table', () => {
  it('names every setting in backticks', () => {
    const missing = CONFIG_KEYS.filter((key) => !readme.includes(`\`${key}\``));
    expect(missing, `add these to the README configuration table: ${missing.join(', ')}`).toEqual([]);
  });

  it('shows the real default of every setting that has one', () => {
    const wrong: string[] = [];
    for (const key of CONFIG_KEYS) {
      const parsed = ConfigSchema.shape[key].safeParse(undefined);
      if (!parsed.success || parsed.data === undefined || parsed.data === '') continue;
      // A list setting whose default is the empty list is shown as empty, like an empty string.
      if (Array.isArray(parsed.data) && parsed.data.length === 0) continue;
      const row = readme.split('\n').find((line) => line.startsWith(`| \`${key}\``));
      if (row && !row.includes(`\`${String(parsed.data)}\``)) wrong.push(`${key}=${String(parsed.data)}`);
    }
    expect(wrong, `README rows whose default differs from libs/config: ${wrong.join(', ')}`).toEqual([]);
  });
});
