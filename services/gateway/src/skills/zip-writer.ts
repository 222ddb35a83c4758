import { ZipFile } from 'yazl';

/** A zip of text files (skill export); folders are implied by the paths. */
export async function writeZip(files: ReadonlyArray<{ path: string; content: string }>): Promise<Buffer> {
  const zip = new ZipFile();
  for (const file of files) zip.addBuffer(Buffer.from(file.content, 'utf8'), file.path, { mode: 0o100644 });
  zip.end();
  const chunks: Buffer[] = [];
  for await (const chunk of zip.outputStream as AsyncIterable<Buffer>) chunks.push(chunk);
  return Buffer.concat(chunks);
}
