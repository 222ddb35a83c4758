import { SKILL_ZIP_LIMITS } from '@quill/contracts';
import yauzl, { type Entry } from 'yauzl';
import { SkillPackageError } from './skill-package-error.ts';

/**
 * Reads an uploaded skill zip defensively, entry by entry from the central directory, before a
 * byte is inflated: no absolute paths, no `..` segments (zip-slip), no symlinks, no encrypted
 * entries, bounded entry count, sizes and compression ratio (zip bombs). Inflated bytes are
 * counted as they stream, so a size the archive lies about is caught too (yauzl checks it).
 * Nothing is written to disk and nothing is executed.
 */
export type ZipLimits = { -readonly [K in keyof typeof SKILL_ZIP_LIMITS]: number };

const S_IFMT = 0o170000;
const S_IFLNK = 0o120000;
// Archivers' litter that is neither content nor a reason to refuse the package.
const IGNORED = [/^__MACOSX\//, /(^|\/)\.DS_Store$/];

export async function readZipEntries(
  buffer: Buffer,
  limits: ZipLimits = SKILL_ZIP_LIMITS,
): Promise<Map<string, Buffer>> {
  if (buffer.length > limits.maxZipBytes) {
    throw new SkillPackageError('package_too_large', `The zip is larger than ${limits.maxZipBytes} bytes.`);
  }
  let zip: yauzl.ZipFile;
  try {
    zip = await yauzl.fromBufferPromise(buffer, {
      lazyEntries: true,
      decodeStrings: false,
      validateEntrySizes: true,
    });
  } catch (error) {
    throw new SkillPackageError('not_a_zip', `Not a readable zip archive: ${(error as Error).message}.`);
  }
  if (zip.entryCount > limits.maxEntries) {
    zip.close();
    throw new SkillPackageError(
      'too_many_files',
      `The zip has ${zip.entryCount} entries; at most ${limits.maxEntries}.`,
    );
  }
  const files = new Map<string, Buffer>();
  let total = 0;
  try {
    for await (const entry of zip.eachEntry()) {
      const path = checkedPath(entry, limits);
      if (path.endsWith('/') || IGNORED.some((pattern) => pattern.test(path))) continue;
      checkSizes(entry, path, limits);
      total += entry.uncompressedSize;
      if (total > limits.maxTotalBytes) {
        throw new SkillPackageError(
          'package_too_large',
          `Unpacked, the package exceeds ${limits.maxTotalBytes} bytes.`,
          path,
        );
      }
      if (files.has(path)) throw new SkillPackageError('duplicate_path', `“${path}” appears twice.`, path);
      files.set(path, await inflate(zip, entry, path));
    }
  } catch (error) {
    if (error instanceof SkillPackageError) throw error;
    throw new SkillPackageError('not_a_zip', `The zip is damaged: ${(error as Error).message}.`);
  } finally {
    zip.close();
  }
  return files;
}

function checkedPath(entry: Entry, limits: ZipLimits): string {
  const raw = entry.fileName as unknown as Buffer;
  // Strict: a backslash is not turned into a separator, it is refused below.
  const path = yauzl.getFileNameLowLevel(entry.generalPurposeBitFlag, raw, entry.extraFields, true);
  if (entry.isEncrypted()) throw new SkillPackageError('encrypted_entry', `“${path}” is encrypted.`, path);
  if (path.startsWith('/') || /^[a-zA-Z]:/.test(path)) {
    throw new SkillPackageError('absolute_path', `“${path}” is an absolute path.`, path);
  }
  const segments = path.split('/');
  if (segments.includes('..')) {
    throw new SkillPackageError('path_traversal', `“${path}” climbs out of the package (..).`, path);
  }
  if (path.includes('\\') || hasControlCharacter(path) || segments.some((segment) => segment === '.')) {
    throw new SkillPackageError('invalid_path', `“${path}” is not a plain relative path.`, path);
  }
  if (path.length > limits.maxPathLength || segments.length > limits.maxPathDepth) {
    throw new SkillPackageError('invalid_path', `“${path}” is too long or too deep.`, path);
  }
  if (((entry.externalFileAttributes >>> 16) & S_IFMT) === S_IFLNK) {
    throw new SkillPackageError('symlink', `“${path}” is a symbolic link.`, path);
  }
  return path;
}

function hasControlCharacter(text: string): boolean {
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
}

function checkSizes(entry: Entry, path: string, limits: ZipLimits): void {
  if (entry.uncompressedSize > limits.maxEntryBytes) {
    throw new SkillPackageError(
      'file_too_large',
      `“${path}” unpacks to more than ${limits.maxEntryBytes} bytes.`,
      path,
    );
  }
  const ratio = entry.uncompressedSize / Math.max(1, entry.compressedSize);
  if (entry.uncompressedSize >= limits.ratioMinBytes && ratio > limits.maxCompressionRatio) {
    throw new SkillPackageError(
      'compression_ratio',
      `“${path}” expands ${Math.round(ratio)}× (more than ${limits.maxCompressionRatio}×): refused as a possible zip bomb.`,
      path,
    );
  }
}

async function inflate(zip: yauzl.ZipFile, entry: Entry, path: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  try {
    const stream = await zip.openReadStreamPromise(entry);
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      bytes += chunk.length;
      // yauzl stops at the declared size; this is the second fence.
      if (bytes > entry.uncompressedSize) throw new Error('more bytes than declared');
      chunks.push(chunk);
    }
  } catch (error) {
    throw new SkillPackageError(
      'size_mismatch',
      `“${path}” does not unpack to its declared size: ${(error as Error).message}.`,
      path,
    );
  }
  return Buffer.concat(chunks);
}
