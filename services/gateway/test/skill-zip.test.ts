import { SKILL_ZIP_LIMITS, type SkillZipRejection } from '@quill/contracts';
import { describe, expect, it } from 'vitest';
import { buildSkillPackage, renderSkillMarkdown } from '../src/skills/skill-package.ts';
import { SkillPackageError } from '../src/skills/skill-package-error.ts';
import { readZipEntries } from '../src/skills/zip-reader.ts';
import { writeZip } from '../src/skills/zip-writer.ts';
import { buildZip, SKILL_MD, type ZipEntrySpec } from './zip-builder.ts';

async function importZip(buffer: Buffer, limits = SKILL_ZIP_LIMITS) {
  return buildSkillPackage(await readZipEntries(buffer, limits));
}

async function rejection(buffer: Buffer, limits = SKILL_ZIP_LIMITS): Promise<SkillPackageError> {
  try {
    await importZip(buffer, limits);
  } catch (error) {
    if (error instanceof SkillPackageError) return error;
    throw error;
  }
  throw new Error('the zip was accepted');
}

const withSkill = (...entries: ZipEntrySpec[]) =>
  buildZip([{ name: 'hooks/SKILL.md', data: SKILL_MD }, ...entries]);

describe('skill zip import', () => {
  it('accepts a standard package in a top-level folder, keeping scripts as text', async () => {
    const skill = await importZip(
      withSkill(
        { name: 'hooks/reference/types.md', data: '# 悬念类型\n身份、动机、时间。', deflate: true },
        { name: 'hooks/scripts/count.py', data: 'print("never executed")' },
        { name: '__MACOSX/hooks/._SKILL.md', data: 'junk' },
      ),
    );
    expect(skill).toMatchObject({
      name: 'suspense-hooks',
      description: '为章节结尾设计悬念钩子',
      content: '# 悬念钩子\n\n每章结尾留一个未解的问题。',
      resources: [
        { path: 'reference/types.md', content: '# 悬念类型\n身份、动机、时间。' },
        { path: 'scripts/count.py', content: 'print("never executed")' },
      ],
    });
    expect(await importZip(buildZip([{ name: 'SKILL.md', data: SKILL_MD }]))).toMatchObject({
      name: 'suspense-hooks',
    });
  });

  const cases: Array<[string, () => Buffer, SkillZipRejection, Partial<typeof SKILL_ZIP_LIMITS>?]> = [
    ['zip-slip with ..', () => withSkill({ name: '../evil.md', data: 'x' }), 'path_traversal'],
    [
      'zip-slip inside a folder',
      () => withSkill({ name: 'hooks/../../etc/cron.d/evil', data: 'x' }),
      'path_traversal',
    ],
    ['an absolute path', () => withSkill({ name: '/etc/passwd', data: 'x' }), 'absolute_path'],
    ['a Windows drive path', () => withSkill({ name: 'C:/Windows/evil.bat', data: 'x' }), 'absolute_path'],
    ['backslash separators', () => withSkill({ name: 'hooks\\..\\evil', data: 'x' }), 'invalid_path'],
    ['a symlink', () => withSkill({ name: 'hooks/link', data: '/etc/passwd', mode: 0o120777 }), 'symlink'],
    [
      'an encrypted entry',
      () => withSkill({ name: 'hooks/secret.md', data: 'x', encrypted: true }),
      'encrypted_entry',
    ],
    [
      'too many files',
      () =>
        withSkill(
          ...Array.from({ length: SKILL_ZIP_LIMITS.maxEntries }, (_, index) => ({
            name: `hooks/f${index}.md`,
            data: 'x',
          })),
        ),
      'too_many_files',
    ],
    [
      'a file over the size limit',
      () => withSkill({ name: 'hooks/big.md', data: 'a'.repeat(SKILL_ZIP_LIMITS.maxEntryBytes + 1) }),
      'file_too_large',
    ],
    [
      'a zip bomb (compression ratio)',
      () => withSkill({ name: 'hooks/bomb.md', data: Buffer.alloc(512 * 1024, 0x61), deflate: true }),
      'compression_ratio',
    ],
    [
      'an entry that inflates past its declared size',
      () => withSkill({ name: 'hooks/liar.md', data: 'b'.repeat(5000), deflate: true, declaredSize: 100 }),
      'size_mismatch',
    ],
    [
      'too much in total',
      () =>
        withSkill(
          { name: 'hooks/a.md', data: 'a'.repeat(600) },
          { name: 'hooks/b.md', data: 'b'.repeat(600) },
        ),
      'package_too_large',
      { maxTotalBytes: 1_000 },
    ],
    [
      'the same path twice',
      () => withSkill({ name: 'hooks/a.md', data: '1' }, { name: 'hooks/a.md', data: '2' }),
      'duplicate_path',
    ],
    [
      'a binary file',
      () => withSkill({ name: 'hooks/image.png', data: Buffer.from([0x89, 0x50, 0x00, 0x47]) }),
      'binary_file',
    ],
    ['no SKILL.md', () => buildZip([{ name: 'hooks/README.md', data: 'hi' }]), 'missing_skill_md'],
    [
      'a bad skill name',
      () => buildZip([{ name: 'SKILL.md', data: SKILL_MD.replace('suspense-hooks', 'Suspense Hooks!') }]),
      'invalid_front_matter',
    ],
    [
      'no front matter',
      () => buildZip([{ name: 'SKILL.md', data: '# just markdown' }]),
      'invalid_front_matter',
    ],
    ['not a zip at all', () => Buffer.from('this is not a zip file, just text'), 'not_a_zip'],
  ];

  it.each(cases)('refuses %s with a clear rule', async (_label, build, rule, limits) => {
    const error = await rejection(build(), { ...SKILL_ZIP_LIMITS, ...limits });
    expect(error.rule).toBe(rule);
    expect(error.message.length).toBeGreaterThan(10);
  });

  it('exports a package that imports back unchanged', async () => {
    const original = await importZip(
      withSkill({ name: 'hooks/reference/types.md', data: '身份、动机、时间。' }),
    );
    const exported = await writeZip([
      {
        path: `${original.name}/SKILL.md`,
        content: renderSkillMarkdown(original.metadata, original.content),
      },
      ...original.resources.map((resource) => ({
        path: `${original.name}/${resource.path}`,
        content: resource.content,
      })),
    ]);
    expect(await importZip(exported)).toEqual(original);
  });
});
