/**
 * 「待审查内容」 and 「返修对象当前正文」 (docs/agent-behaviour.md 「送审证据」): the stored text of the
 * files a review is about, within one budget shared by every file. A file that does not fit its
 * share shows the part this request changed (the diff against its text before the run's first
 * write), not its head: the head of a long chapter is usually what the writer did not touch.
 * Whatever is left out is marked so the reviewer reads it by id instead of treating it as checked.
 */
export interface ReviewFile {
  id: string;
  title: string;
  updatedAt: string;
  content: string;
  /** The text before this run's first write ('' when the run created it); unknown → the head is shown. */
  before?: string;
}

/** A file the evidence could not read within its time limit. */
export interface UnreadFile {
  id: string;
  title: string;
}

/** Budget for 「待审查内容」, shared by every file in it. */
export const REVIEW_CONTENT_BUDGET_CHARS = 12_000;

export interface Span {
  start: number;
  end: number;
}

/** The part of `after` that differs from `before`: what is left between the common prefix and suffix. */
export function changedSpan(before: string, after: string): Span {
  const limit = Math.min(before.length, after.length);
  let prefix = 0;
  while (prefix < limit && before[prefix] === after[prefix]) prefix++;
  let suffix = 0;
  while (suffix < limit - prefix && before[before.length - 1 - suffix] === after[after.length - 1 - suffix]) {
    suffix++;
  }
  return { start: prefix, end: after.length - suffix };
}

/**
 * A window of at most `size` chars over `text` that covers `span` (its start, when the span is
 * longer than the window), the rest of the room spent evenly on the text around it, its edges
 * moved to line breaks when that does not cut into the span.
 */
export function windowAround(text: string, span: Span, size: number): Span {
  if (text.length <= size) return { start: 0, end: text.length };
  if (span.end - span.start >= size) return { start: span.start, end: span.start + size };
  const room = size - (span.end - span.start);
  let start = Math.max(0, span.start - Math.floor(room / 2));
  let end = Math.min(text.length, start + size);
  start = Math.max(0, end - size);
  const lineStart = text.indexOf('\n', start);
  if (start > 0 && lineStart !== -1 && lineStart < span.start) start = lineStart + 1;
  const lineEnd = text.lastIndexOf('\n', end - 1);
  if (end < text.length && lineEnd >= span.end) end = lineEnd;
  return { start, end };
}

export function reviewContent(
  files: readonly ReviewFile[],
  budget = REVIEW_CONTENT_BUDGET_CHARS,
  unread: readonly UnreadFile[] = [],
): string {
  const notRead = unread.map(
    (file) =>
      `来源：《${file.title}》 (id=${file.id}) 没能在读取时限内读到，没有附上也没有核对：用 query_files(id="${file.id}") 按章节读取后再下结论。`,
  );
  if (files.length === 0 && notRead.length === 0) return '（本轮没有成功写入的正文。）';
  const shares = allocate(
    files.map((file) => file.content.length),
    budget,
  );
  const shown = files.map((file, index) => renderFile(file, shares[index]!));
  return [...shown, ...notRead].join('\n\n');
}

function renderFile(file: ReviewFile, share: number): string {
  const { content } = file;
  const source = `来源：《${file.title}》 (id=${file.id}, updated_at=${file.updatedAt})`;
  if (share >= content.length) return `${source} 以下是全文，不用再读取。\n${content}`;
  const readMore = `用 query_files(id="${file.id}") 按章节读取后再下结论`;
  const changed = file.before === undefined ? undefined : changedSpan(file.before, content);
  if (!changed || changed.start === 0 || changed.end <= changed.start) {
    // Unknown history, a new file, a change from the top or none at all: the head it is.
    const head = content.slice(0, share);
    const omitted = content.length - head.length;
    return `${source} 只附了前 ${head.length}/${content.length} 字。\n${head}\n[已省略后 ${omitted} 字，没有核对：${readMore}]`;
  }
  const window = windowAround(content, changed, share);
  const parts = [
    `${source} 只附了本请求改动的部分：第 ${window.start + 1}–${window.end} 字（共 ${content.length} 字；本请求改动的是第 ${changed.start + 1}–${changed.end} 字）。`,
  ];
  if (window.start > 0) parts.push(`[已省略前 ${window.start} 字，没有核对：${readMore}]`);
  parts.push(content.slice(window.start, window.end));
  if (window.end < content.length) {
    parts.push(`[已省略后 ${content.length - window.end} 字，没有核对：${readMore}]`);
  }
  return parts.join('\n');
}

/** A short file leaves its unused share to the others. */
function allocate(lengths: readonly number[], budget: number): number[] {
  const shares = lengths.map(() => 0);
  let left = budget;
  let open = lengths.map((_, index) => index);
  while (left > 0 && open.length > 0) {
    const share = Math.floor(left / open.length);
    if (share === 0) break;
    const stillOpen: number[] = [];
    for (const index of open) {
      const take = Math.min(share, lengths[index]! - shares[index]!);
      shares[index]! += take;
      left -= take;
      if (shares[index]! < lengths[index]!) stillOpen.push(index);
    }
    open = stillOpen;
  }
  return shares;
}

// A one-character title would match almost any review.
const MIN_CITED_TITLE_CHARS = 2;

/**
 * The files a review names, by id or by title: the revising writer gets only their current text
 * (「返修对象当前正文」), in the order the run wrote them.
 */
export function citedFiles<T extends { id: string; title: string }>(
  reviewText: string,
  candidates: readonly T[],
): T[] {
  return candidates.filter(
    (file) =>
      reviewText.includes(file.id) ||
      ([...file.title.trim()].length >= MIN_CITED_TITLE_CHARS && reviewText.includes(file.title.trim())),
  );
}
