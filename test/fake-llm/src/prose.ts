/**
 * Fixed corpus for the default role replies. Fixed so that every run of the test suite and the
 * benchmarks streams exactly the same characters.
 */

export const CHAPTER_TITLE = '第一章 雨夜里的旧书店';
export const OUTLINE_TITLE = '全书大纲 雨夜旧书店';
export const HOOK_TITLE = '开篇钩子设计';

const CHAPTER_SENTENCES = [
  '雨从傍晚开始下，一直下到街灯一盏接一盏亮起来，石板路上浮着一层碎金似的光。',
  '林晚收起伞，站在那家没有招牌的旧书店门口，犹豫了很久才推开那扇吱呀作响的木门。',
  '门上的铜铃轻轻一晃，声音像是从很远的地方传来，又像是早就等在这里的一句问候。',
  '店里比外面暖和，空气里混着旧纸、樟脑和一点点咖啡的苦香，让人忍不住放慢脚步。',
  '书架一直顶到天花板，最高的那一层要踩着梯子才够得着，梯子的横档已经被磨得发亮。',
  '柜台后面坐着一个头发花白的老人，正用一支细细的毛笔修补一本封面脱落的线装书。',
  '他没有抬头，只是说了一句“随便看”，语气平淡得仿佛她每天傍晚都会来一样。',
  '林晚沿着书架慢慢往里走，指尖掠过一排排书脊，有的烫金已经剥落，有的还带着前主人的批注。',
  '在最里面的角落，她看见一本深蓝色布面的日记本，书脊上没有字，只有一道浅浅的折痕。',
  '她把它抽出来，翻开第一页，上面用钢笔写着一个日期，正是二十年前她母亲失踪的那一天。',
  '字迹娟秀而急促，像是写字的人一边写一边回头张望，生怕被什么人撞见。',
  '“如果有人读到这里，请替我把最后一页交给雨夜里来的那个孩子。”',
  '林晚的心跳一下子乱了，她下意识地往后翻，却发现最后一页被人整整齐齐地裁掉了。',
  '窗外的雨声忽然大了起来，铜铃又响了一下，可门口明明没有人进来。',
  '老人终于放下毛笔，抬起头看着她，目光里有一种说不清的疲惫，也有一点如释重负。',
  '“你来晚了二十年，”他说，“不过还不算太晚。那一页，一直在等你。”',
  '林晚攥紧了日记本，指节微微发白，她想问的事情太多，一时竟不知道该从哪一句开始。',
  '老人起身走到门边，把那块写着“营业中”的木牌翻了过来，又把门闩轻轻插上。',
  '“坐吧，”他指了指柜台旁那把旧藤椅，“雨还要下很久，这个故事也不短。”',
  '炉子上的水壶开始低低地鸣叫，雨点敲在玻璃上，像有人在窗外一遍又一遍地数着时间。',
] as const;

const OUTLINE_SENTENCES = [
  '第一章：雨夜里，林晚走进一家没有招牌的旧书店，意外找到母亲失踪当天写下的日记。',
  '第二章：书店老人讲述二十年前的那个雨夜，却对日记被裁掉的最后一页闭口不谈。',
  '第三章：林晚按日记里的线索寻访母亲的旧友，发现每个人的回忆都互相矛盾。',
  '第四章：她在城郊的旧邮局找到一封从未寄出的信，信封上写的是她自己的名字。',
  '第五章：真相渐渐浮出水面，原来母亲的失踪与旧书店的上一任主人有关。',
  '第六章：又一个雨夜，林晚回到书店，终于读到了那最后一页，也做出了自己的选择。',
] as const;

const HOOK_SENTENCES = [
  '开篇钩子：一本出现在旧书店角落、日期恰好是母亲失踪那天的日记。',
  '悬念一：日记最后一页被整齐裁掉，裁掉它的人是谁，为什么要等二十年？',
  '悬念二：书店老人似乎一直在等林晚，他知道的远比他说出口的多。',
  '章末钩子：门上的铜铃在无人进门时响起，暗示书店里还有第三个人。',
] as const;

/** Groups sentences into paragraphs of `size`, separated by blank lines. */
function paragraphs(sentences: readonly string[], size: number): string {
  const groups: string[] = [];
  for (let start = 0; start < sentences.length; start += size) {
    groups.push(sentences.slice(start, start + size).join(''));
  }
  return groups.join('\n\n');
}

export function chapterBody(): string {
  return paragraphs(CHAPTER_SENTENCES, 4);
}

export function outlineBody(): string {
  return OUTLINE_SENTENCES.join('\n');
}

export function hookBody(): string {
  return HOOK_SENTENCES.join('\n');
}
