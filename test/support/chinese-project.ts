import { randomUUID } from 'node:crypto';
import type { ProjectFile } from '@quill/db';
import { createFile, createProject, createUser } from '@quill/db/gateway';
import type { Pool } from 'pg';

/**
 * A deterministic 200-file Chinese novel project for context tests and the compile benchmark:
 * 30 character cards, 20 settings, 3 outlines, 120 chapters in 正文/ and 27 notes. The prose is
 * generated from templates with a seeded PRNG, so every run builds the same text.
 */
export const CHARACTER_NAMES = [
  '林晚',
  '沈砚',
  '顾长风',
  '苏念',
  '陆沉舟',
  '许青禾',
  '周明远',
  '江映雪',
  '韩松',
  '白露',
  '程远山',
  '叶知秋',
  '孟星河',
  '唐小满',
  '杜若',
  '秦岭',
  '方寸',
  '柳如烟',
  '赵北辰',
  '温言',
  '宋知意',
  '梁鹤',
  '贺兰',
  '谢云归',
  '乔木',
  '邵安',
  '卫青梧',
  '霍思齐',
  '萧瑟',
  '钟离',
] as const;
export const SETTING_NAMES = [
  '旧书店',
  '雨巷',
  '铜铃',
  '钟楼',
  '渡口',
  '望江楼',
  '青石桥',
  '老码头',
  '灯塔',
  '茶馆',
  '藏书阁',
  '梧桐街',
  '夜市',
  '废弃电台',
  '古井',
  '城南剧院',
  '山间寺庙',
  '邮局',
  '火车站',
  '药铺',
] as const;

const VERBS = ['推开', '凝视', '想起', '拾起', '藏起', '走过', '听见', '擦拭', '翻开', '守着'];
const OBJECTS = ['那本日记', '一封旧信', '褪色的照片', '半截蜡烛', '一把钥匙', '铜铃的碎片', '地图', '雨伞'];
const MOODS = [
  '雨一直没有停',
  '风从窗缝里钻进来',
  '远处传来钟声',
  '灯光忽明忽暗',
  '街上空无一人',
  '空气里有潮湿的纸味',
];

function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = state;
    value = Math.imul(value ^ (value >>> 15), value | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  };
}

function pick<T>(items: readonly T[], next: () => number): T {
  return items[Math.floor(next() * items.length)]!;
}

export function prose(
  seed: number,
  chars: number,
  cast: readonly string[] = CHARACTER_NAMES,
  places: readonly string[] = SETTING_NAMES,
): string {
  const next = random(seed);
  let text = '';
  while (text.length < chars) {
    const sentence = `${pick(cast, next)}在${pick(places, next)}${pick(VERBS, next)}${pick(OBJECTS, next)}，${pick(MOODS, next)}。`;
    text += next() < 0.15 ? `${sentence}\n\n` : sentence;
  }
  return text.slice(0, chars);
}

const CHINESE_DIGITS = ['零', '一', '二', '三', '四', '五', '六', '七', '八', '九'];

export function chineseNumber(value: number): string {
  if (value < 10) return CHINESE_DIGITS[value]!;
  if (value < 20) return `十${value % 10 ? CHINESE_DIGITS[value % 10] : ''}`;
  if (value < 100)
    return `${CHINESE_DIGITS[Math.floor(value / 10)]}十${value % 10 ? CHINESE_DIGITS[value % 10] : ''}`;
  const rest = value % 100;
  const tens =
    rest === 0 ? '' : rest < 10 ? `零${CHINESE_DIGITS[rest]}` : chineseNumber(rest).replace(/^十/, '一十');
  return `${CHINESE_DIGITS[Math.floor(value / 100)]}百${tens}`;
}

export interface ChineseProject {
  projectId: string;
  files: ProjectFile[];
  byTitle: Map<string, ProjectFile>;
  chapter(number: number): ProjectFile;
}

export const CHAPTER_COUNT = 120;

/** What an author of this novel asks, in turn: the benchmarks' messages into it. */
export const AUTHOR_REQUESTS = [
  '润色这一章，让沈砚在钟楼出场',
  '继续写下一章，呼应铜铃的线索',
  '检查人物动机是否前后一致',
  '温言在废弃电台找到半截蜡烛',
];

/** A new author and their novel: for the benchmarks that read a real project. */
export async function seedNovelist(pool: Pool): Promise<{ userId: string; project: ChineseProject }> {
  const user = await createUser(pool, {
    email: `novelist-${randomUUID()}@quill.test`,
    displayName: 'novelist',
  });
  return { userId: user.id, project: await seedChineseProject(pool, user.id) };
}

export async function seedChineseProject(pool: Pool, ownerId: string): Promise<ChineseProject> {
  const project = await createProject(pool, {
    ownerId,
    title: '雨夜书店',
    notes: '叙事约束：第三人称有限视角，跟随林晚；不出现超自然解释；每章结尾留一个悬念。',
  });
  const specs: Array<{ title: string; fileType: string; folder: string; content: string }> = [];
  CHARACTER_NAMES.forEach((name, index) => {
    specs.push({
      title: name,
      fileType: 'character',
      folder: '角色',
      content: `${name}，${20 + index}岁。${prose(1000 + index, 700, [name])}`,
    });
  });
  SETTING_NAMES.forEach((name, index) => {
    const regulars = [CHARACTER_NAMES[index]!, CHARACTER_NAMES[index + 10]!];
    specs.push({
      title: name,
      fileType: 'setting',
      folder: '设定',
      content: `${name}：${prose(2000 + index, 600, regulars, [name])}`,
    });
  });
  ['全书大纲', '第一卷大纲', '人物关系图'].forEach((title, index) => {
    specs.push({ title, fileType: 'outline', folder: '', content: prose(3000 + index, 1800) });
  });
  // Each chapter has a small cast and a few places, as real chapters do.
  for (let number = 1; number <= CHAPTER_COUNT; number++) {
    const cast = [0, 7, 13].map((offset) => CHARACTER_NAMES[(number + offset) % CHARACTER_NAMES.length]!);
    const places = [0, 3, 11].map((offset) => SETTING_NAMES[(number + offset) % SETTING_NAMES.length]!);
    specs.push({
      title: `第${chineseNumber(number)}章 ${places[0]}`,
      fileType: 'draft',
      folder: '正文',
      content: prose(4000 + number, 2200 + ((number * 37) % 1200), cast, places),
    });
  }
  for (let index = 1; index <= 27; index++) {
    specs.push({
      title: `灵感 ${index}`,
      fileType: 'note',
      folder: '灵感',
      content: prose(5000 + index, 300),
    });
  }
  const files: ProjectFile[] = [];
  for (const spec of specs) files.push(await createFile(pool, { projectId: project.id, ...spec }));
  const byTitle = new Map(files.map((file) => [file.title, file]));
  const chapters = files.filter((file) => file.fileType === 'draft');
  return {
    projectId: project.id,
    files,
    byTitle,
    chapter: (number) => chapters[number - 1]!,
  };
}
