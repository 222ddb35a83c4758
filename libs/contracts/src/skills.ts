import { z } from 'zod';
import { SKILL_NAME_MAX_LENGTH, SKILL_NAME_PATTERN } from './context.ts';

/** Skills HTTP API (gateway): import a zip, list, enable/disable, export, delete. */
export const SkillName = z.string().min(1).max(SKILL_NAME_MAX_LENGTH).regex(SKILL_NAME_PATTERN);
export const SkillNameParams = z.object({ name: SkillName });
export const SkillPatchBody = z.strictObject({ enabled: z.boolean() });

export const SkillView = z.object({
  name: z.string(),
  description: z.string(),
  enabled: z.boolean(),
  resource_count: z.number().int().nonnegative(),
  updated_at: z.string(),
  /** The newest version; every edit that changes the package is the next one (docs/kernel.md). */
  version: z.number().int().positive(),
});
export type SkillView = z.infer<typeof SkillView>;

/**
 * Limits of an imported skill zip. A package breaking one is refused with `invalid_request` and
 * a `zip` field naming the rule (`path_traversal`, `symlink`, `compression_ratio`…).
 */
export const SKILL_ZIP_LIMITS = {
  /** The upload itself. */
  maxZipBytes: 5 * 1024 * 1024,
  /** Entries in the archive, directories included. */
  maxEntries: 200,
  maxEntryBytes: 1024 * 1024,
  maxTotalBytes: 10 * 1024 * 1024,
  /** Uncompressed / compressed, checked for entries from `ratioMinBytes` up (zip bombs). */
  maxCompressionRatio: 100,
  ratioMinBytes: 64 * 1024,
  maxPathLength: 255,
  maxPathDepth: 8,
} as const;

export const SKILL_ZIP_REJECTIONS = [
  'not_a_zip',
  'encrypted_entry',
  'absolute_path',
  'path_traversal',
  'invalid_path',
  'symlink',
  'too_many_files',
  'file_too_large',
  'package_too_large',
  'compression_ratio',
  'size_mismatch',
  'duplicate_path',
  'binary_file',
  'missing_skill_md',
  'invalid_front_matter',
] as const;
export type SkillZipRejection = (typeof SKILL_ZIP_REJECTIONS)[number];
