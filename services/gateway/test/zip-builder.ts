import { crc32, deflateRawSync } from 'node:zlib';

/**
 * A minimal zip writer for tests, able to build what real archivers refuse to: `..` and absolute
 * names, symlink entries, encrypted flags, sizes that lie.
 */
export interface ZipEntrySpec {
  name: string;
  data?: Buffer | string;
  /** Unix mode stored in the external attributes (0o120777 = symlink). */
  mode?: number;
  deflate?: boolean;
  /** Overrides the uncompressed size written in the headers. */
  declaredSize?: number;
  encrypted?: boolean;
}

export function buildZip(entries: readonly ZipEntrySpec[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const raw = Buffer.isBuffer(entry.data) ? entry.data : Buffer.from(entry.data ?? '', 'utf8');
    const body = entry.deflate ? deflateRawSync(raw) : raw;
    // ZipCrypto prefixes the data with a 12-byte encryption header.
    const data = entry.encrypted ? Buffer.concat([Buffer.alloc(12, 7), body]) : body;
    const name = Buffer.from(entry.name, 'utf8');
    const flags = 0x0800 | (entry.encrypted ? 0x0001 : 0);
    const method = entry.deflate ? 8 : 0;
    const size = entry.declaredSize ?? raw.length;
    const checksum = crc32(raw);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(flags, 6);
    local.writeUInt16LE(method, 8);
    local.writeUInt32LE(checksum, 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(size, 22);
    local.writeUInt16LE(name.length, 26);
    locals.push(local, name, data);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE((3 << 8) | 20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(flags, 8);
    central.writeUInt16LE(method, 10);
    central.writeUInt32LE(checksum, 16);
    central.writeUInt32LE(data.length, 20);
    central.writeUInt32LE(size, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(((entry.mode ?? 0o100644) << 16) >>> 0, 38);
    central.writeUInt32LE(offset, 42);
    centrals.push(central, name);
    offset += local.length + name.length + data.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

export const SKILL_MD = `---
name: suspense-hooks
description: 为章节结尾设计悬念钩子
---

# 悬念钩子

每章结尾留一个未解的问题。
`;
