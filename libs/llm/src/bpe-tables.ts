import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { BytePairEncodingCore } from 'gpt-tokenizer/BytePairEncodingCore';
import { Cl100KBase } from 'gpt-tokenizer/encodingParams/cl100k_base';
import { O200KBase } from 'gpt-tokenizer/encodingParams/o200k_base';
import { compareUint8Arrays, tryConvertToString } from 'gpt-tokenizer/utfUtil';

export type EncodingName = 'o200k_base' | 'cl100k_base';

/*
 * The BPE rank tables, built once per process and encoding (docs/decisions/0059-tokenizer.md).
 * `gpt-tokenizer`'s core keeps a rank per token as a string key when the token's bytes are valid
 * UTF-8 (all but ~1,600 of o200k's 200k) and the rest as byte arrays in a sorted list: ~15 MB of
 * heap where js-tiktoken's comma-joined byte keys and a byte array per rank took ~70, and it
 * merges by string look-ups (a CJK character ~3 µs instead of ~15–80).
 *
 * Built in one go the table would hold the event loop ~0.3 s (a second or more on a saturated
 * machine): every other run of the process would wait, and a replica's NATS calls could time out
 * at start-up (README "Fault tolerance"). So the ranks file (the `.tiktoken` text the library
 * ships: `<base64 bytes> <rank>` per line) is read asynchronously and its lines are added in
 * slices of a few milliseconds, between which the loop serves I/O; a count needed before that is
 * done completes the build synchronously. The library's constructor does the same work in one
 * loop: the core is made empty and its tables are filled here with the library's own UTF-8 test,
 * the one its look-ups use (pinned version; tokenizer-warmup.test.ts holds the result to the
 * library's constructor rank by rank).
 */

/**
 * Pieces the core keeps merged (an LRU of its own). Quill's counters memoise whole paragraphs
 * (paragraph-counter.ts), so this only helps pieces repeated across paragraphs; the library's
 * default (100k) would keep megabytes per long-lived process.
 */
const MERGE_CACHE_SIZE = 10_000;

const PARAMS = { o200k_base: O200KBase, cl100k_base: Cl100KBase } as const;

/** The core's tables, as its constructor fills them (private members of the pinned version). */
export interface CoreTables {
  bytePairRankDecoder: Array<string | number[]>;
  bytePairStringRankEncoder: Map<string, number>;
  bytePairNonUtfRankDecoder: Map<number, Uint8Array>;
  bytePairNonUtfSortedEncoder: Array<[Uint8Array, number]>;
  mergeableBytePairRankCount: number;
  getBpeRankFromBytes(key: Uint8Array): number | undefined;
  binarySearch(key: Uint8Array): number;
}

/**
 * A token whose bytes start with a UTF-8 byte order mark. The library's UTF-8 test decodes with
 * a TextDecoder that drops a leading BOM, so such bytes would read as the text after the mark;
 * its rank module keeps these tokens (9 in o200k) as bytes, and so does this table. But its look-up
 * of a pair's bytes reads them as that text (a lone "\uFEFF" counted 2 tokens where tiktoken
 * counts 1), so the core made here looks bytes that start with a BOM up among the byte tokens.
 */
function startsWithByteOrderMark(bytes: Uint8Array): boolean {
  return bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf;
}

/**
 * The token's text when its bytes are valid UTF-8, by the library's test. Node's decoder writes
 * U+FFFD for every invalid sequence, so text without one came from valid bytes (nearly every
 * token); only the rest go through the library's slower check.
 */
function utf8Text(bytes: Buffer): string | undefined {
  const text = bytes.toString('utf8');
  return text.includes('\uFFFD') ? tryConvertToString(bytes) : text;
}

function createCore(name: EncodingName): BytePairEncodingCore {
  const core = new BytePairEncodingCore({ ...PARAMS[name]([]), mergeCacheSize: MERGE_CACHE_SIZE });
  const tables = core as unknown as CoreTables;
  const byText = tables.getBpeRankFromBytes.bind(core);
  tables.getBpeRankFromBytes = (key) => {
    if (!startsWithByteOrderMark(key)) return byText(key);
    const index = tables.binarySearch(key);
    return index === -1 ? undefined : tables.bytePairNonUtfSortedEncoder[index]![1];
  };
  return core;
}

interface TableBuild {
  readonly core: BytePairEncodingCore;
  readonly file: string;
  /** The ranks file's text, once read. */
  text?: string;
  /** Where the next line starts. */
  at: number;
  readonly decoder: Array<string | number[]>;
  readonly binary: Array<[Uint8Array, number]>;
  ranks: number;
  done: boolean;
  warming?: Promise<void>;
}

const require = createRequire(import.meta.url);
const builds = new Map<EncodingName, TableBuild>();

function tableBuild(name: EncodingName): TableBuild {
  let build = builds.get(name);
  if (!build) {
    build = {
      core: createCore(name),
      file: require.resolve(`gpt-tokenizer/data/${name}.tiktoken`),
      at: 0,
      decoder: [],
      binary: [],
      ranks: 0,
      done: false,
    };
    builds.set(name, build);
  }
  return build;
}

/** Adds ranks until the table is complete (true) or the slice's time is up (false). */
function buildSlice(build: TableBuild, text: string, sliceMs: number): boolean {
  const until = performance.now() + sliceMs;
  const tables = build.core as unknown as CoreTables;
  let lines = 0;
  while (build.at < text.length) {
    let end = text.indexOf('\n', build.at);
    if (end === -1) end = text.length;
    const space = text.indexOf(' ', build.at);
    if (space > build.at && space < end) {
      const bytes = Buffer.from(text.slice(build.at, space), 'base64');
      const rank = Number(text.slice(space + 1, end));
      const asText = startsWithByteOrderMark(bytes) ? undefined : utf8Text(bytes);
      if (asText === undefined) {
        const array = new Uint8Array(bytes);
        build.decoder[rank] = [...array];
        tables.bytePairNonUtfRankDecoder.set(rank, array);
        build.binary.push([array, rank]);
      } else {
        build.decoder[rank] = asText;
        tables.bytePairStringRankEncoder.set(asText, rank);
      }
      build.ranks++;
    }
    build.at = end + 1;
    if ((++lines & 255) === 0 && performance.now() >= until) return false;
  }
  tables.bytePairRankDecoder = build.decoder;
  tables.bytePairNonUtfSortedEncoder = build.binary.sort((a, b) => compareUint8Arrays(a[0], b[0]));
  tables.mergeableBytePairRankCount = build.ranks;
  build.text = undefined;
  build.done = true;
  return true;
}

/** The encoder of a table, completed now if its warm-up has not finished. */
export function bpeEncoder(name: EncodingName): BytePairEncodingCore {
  const build = tableBuild(name);
  if (!build.done) {
    build.text ??= readFileSync(build.file, 'latin1');
    buildSlice(build, build.text, Number.POSITIVE_INFINITY);
  }
  return build.core;
}

/** Builds the table in slices that leave the event loop free; resolves once it is complete. */
export function warmBpeTable(name: EncodingName, sliceMs: number): Promise<void> {
  const build = tableBuild(name);
  build.warming ??= (async () => {
    // base64 and decimal digits: latin1 reads them byte for byte, without a UTF-8 decode.
    const read = build.text ?? (await readFile(build.file, 'latin1'));
    if (build.done) return;
    build.text ??= read;
    const text = build.text;
    while (!buildSlice(build, text, sliceMs)) {
      await new Promise((resolve) => setImmediate(resolve));
      if (build.done) return;
    }
  })();
  return build.warming;
}
