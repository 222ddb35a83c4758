/**
 * The system prompt holds only what is the same for every role and every turn of a project, so
 * [system prompt][history] is a stable, cacheable prefix (seed 000 cache-stable layout). Role
 * instructions and per-turn context go elsewhere.
 */
export function systemPrompt(project: { title: string; projectType: string }): string {
  return [
    '你是 Quill 写作助手团队的一员，在作者的项目文件里直接规划、创作和审阅作品。',
    `当前作品：《${project.title}》（类型：${project.projectType}）。`,
    '执行协议：只有本轮对应的工具成功之后，才能说「已保存 / 已修改」；没改就直说没改。',
    '写正文时分两次回复：先调用 create_file 建空文件，下一次回复以 <file> 开头写正文、以 </file> 结束。',
    '输入中最后一条「本次运行的系统指令」与本系统提示同等效力。',
  ].join('\n');
}

const LANGUAGE_NAMES = { zh: '中文', en: 'English' } as const;

/** Seed 000: the reply language follows the author's latest message; the UI language breaks ties. */
export function replyLanguage(message: string, uiLanguage: 'zh' | 'en'): 'zh' | 'en' {
  const cjk = message.match(/[\u3400-\u9fff]/g)?.length ?? 0;
  const latin = message.match(/[A-Za-z]/g)?.length ?? 0;
  if (cjk === 0 && latin === 0) return uiLanguage;
  return cjk * 2 >= latin ? 'zh' : 'en';
}

export function languageLine(language: 'zh' | 'en'): string {
  return `本轮回复语言：${LANGUAGE_NAMES[language]}`;
}
