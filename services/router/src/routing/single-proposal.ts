/**
 * Whether the previous reply proposed exactly one change (docs/agent-behaviour.md 「笼统要求先问清楚」):
 * then a vague 「改一下吧」 means "do that one" and asking which change would be a wasted turn.
 *
 * Read from the reply's structure, not guessed from a question mark: the closing part of the
 * reply (what the author answers to, the same 600 characters the router model sees) counts its
 * enumerated proposals — list items and numbered points. Several items are several proposals;
 * none with one proposing sentence is one. Unsure means "not single", so the rule can only
 * save a question, never skip one the author needed.
 */
export const PROPOSAL_TAIL_CHARS = 600;

const LIST_ITEM =
  /^\s*(?:[-*+•]|\d+[.)、．]|[一二三四五六七八九十]+[、.．]|[①②③④⑤⑥⑦⑧⑨⑩]|\(\d+\)|（\d+）)\s*\S/;
const PROPOSING = [
  /(建议|可以|要不要|是否|需不需要|我来|我可以|不妨|打算)[^。！？\n]{0,40}(改|修改|调整|换成|删掉|删去|加上|补上|压缩|扩写|润色|重写)/,
  /\b(I (?:suggest|propose|could|can|would)|shall I|should I|want me to|would you like me to)\b/i,
];

/** How many changes the reply's closing part proposes; 0 when it proposes none. */
export function proposedChangeCount(reply: string): number {
  const tail = reply.slice(-PROPOSAL_TAIL_CHARS);
  const items = tail.split('\n').filter((line) => LIST_ITEM.test(line)).length;
  if (items > 0) return items;
  const sentences = tail
    .split(/(?<=[。！？!?\n])/)
    .filter((sentence) => PROPOSING.some((p) => p.test(sentence)));
  return sentences.length;
}

export function proposedSingleChange(reply: string | undefined): boolean {
  return reply !== undefined && proposedChangeCount(reply) === 1;
}
