import { ZipFile } from 'yazl';

/**
 * A zip of text files (skill and project export); folders are implied by the paths. Every entry
 * carries the same fixed time, so the same files always make the same bytes (a project export →
 * import → export round trip is byte for byte).
 */
const FIXED_MTIME = new Date(2000, 0, 1);

export async function writeZip(files: ReadonlyArray<{ path: string; content: string }>): Promise<Buffer> {
  const zip = new ZipFile();
  for (const file of files)
    zip.addBuffer(Buffer.from(file.content, 'utf8'), file.path, { mode: 0o100644, mtime: FIXED_MTIME });
  zip.end();
  const chunks: Buffer[] = [];
  for await (const chunk of zip.outputStream as AsyncIterable<Buffer>) chunks.push(chunk);
  return Buffer.concat(chunks);
}
