import type { AgentRole } from '@quill/contracts';

/**
 * Author-facing wording of the router's own handoffs (docs/agent-behaviour.md `author_facing_text`): the
 * author's latest message decides the language, as for every reply.
 */
export type AuthorLanguage = 'zh' | 'en';

export function authorLanguage(message: string): AuthorLanguage {
  const cjk = message.match(/[\u3400-\u9fff]/g)?.length ?? 0;
  const latin = message.match(/[A-Za-z]/g)?.length ?? 0;
  return latin > 0 && cjk * 2 < latin ? 'en' : 'zh';
}

const AGENT_NAMES: Record<AuthorLanguage, Record<AgentRole, string>> = {
  zh: { planner: '规划师', hook_designer: '钩子设计师', writer: '作家', quality_reviewer: '审稿人' },
  en: {
    planner: 'the planner',
    hook_designer: 'the hook designer',
    writer: 'the writer',
    quality_reviewer: 'the reviewer',
  },
};

export function agentName(role: AgentRole, language: AuthorLanguage): string {
  return AGENT_NAMES[language][role];
}

export function plannedHandoffReason(role: AgentRole, language: AuthorLanguage): string {
  return language === 'en'
    ? `Handing over to ${agentName(role, language)} as planned.`
    : `按计划交给${agentName(role, language)}继续。`;
}

export function reviewGateReason(bodyChars: number, language: AuthorLanguage): string {
  return language === 'en'
    ? `The draft (${bodyChars} characters) goes to the reviewer before you get it.`
    : `本轮正文 ${bodyChars} 字，先交给审稿人把关。`;
}
