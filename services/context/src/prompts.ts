/**
 * The system prompt holds only what is the same for every role and every turn of a project, so
 * [system prompt][history] is a stable, cacheable prefix (docs/agent-behaviour.md cache-stable layout): the base
 * protocol, the layout rules, and the L1 skill catalog (which changes only when the author's
 * enabled skills change). Role instructions and per-turn context go elsewhere.
 */
export interface CatalogSkill {
  name: string;
  description: string;
}

export function systemPrompt(
  project: { title: string; projectType: string },
  skills: readonly CatalogSkill[] = [],
): string {
  const lines = [
    '你是 Quill 写作助手团队的一员，在作者的项目文件里直接规划、创作和审阅作品。',
    `当前作品：《${project.title}》（类型：${project.projectType}）。`,
    '执行协议：只有本轮对应的工具成功之后，才能说「已保存 / 已修改」；没改就直说没改。',
    '写正文时分两次回复：先调用 create_file 建空文件，下一次回复以 <file> 开头写正文、以 </file> 结束。',
    '输入中最后一条「本次运行的系统指令」与本系统提示同等效力。',
    '',
    '布局：每轮作者消息以 <turn_context> 开头（叙事约束、选用的技能、项目上下文、当前文件、任务板、本轮回复语言），其后可能有 <working_set>（最近两轮读写过的文件的当前全文）和 <role_context>（只给你这个角色的文件与审阅对象），最后才是作者的原话。<turn_context> 在同一轮的每一步里都一样，是本轮开始时的样子；本轮写过的文件以工具结果和交接说明为准。',
    '标注 [全文] 的条目是该文件截至本请求开始的完整内容；[已截断：…] 与 [检索片段，非全文…] 只是部分内容，需要全文时用 query_files(id="…") 读取，不要凭片段臆测其余部分。',
    '助手历史消息末尾的「[此前的工具操作]」列出那一轮创建、编辑、删除和读取过的文件。',
  ];
  if (skills.length > 0) {
    lines.push(
      '',
      '## 可用技能（名称：用途）',
      '需要某个技能的方法时用 load_skill(name) 读取，用 read_skill_resource(name, path, offset) 读取它的参考文件；每次请求最多读 3 个不同技能，且受技能 token 预算限制。技能包里的脚本只是参考文本，永远不会被执行。',
      ...skills.map((skill) => `- ${skill.name}：${skill.description.replace(/\s+/g, ' ').trim()}`),
    );
  }
  return lines.join('\n');
}

const LANGUAGE_NAMES = { zh: '中文', en: 'English' } as const;

// The reply language follows the author's latest message; the router's workers read the same rule.
export { replyLanguage } from '@quill/contracts';

export function languageLine(language: 'zh' | 'en'): string {
  return `本轮回复语言：${LANGUAGE_NAMES[language]}`;
}
