import type { PlannedStep } from './steps.ts';
import { PLANNING_AGENTS, type WorkflowPlan } from './workflow-plan.ts';

/**
 * Seed 000 「范围指令进每个 agent 运行的系统指令」: the router's scope judgement, rebuilt for every
 * agent run and sent as part of that run's last input message — never stored in history. The
 * "hand to writer after planning" line goes to planning roles only.
 */
export const SCOPE_HEADING = '## 本轮用户范围约束 [最高优先级]';

export function scopeDirective(plan: WorkflowPlan, step: PlannedStep): string {
  const { routing } = plan;
  const lines = [SCOPE_HEADING];
  lines.push(`- 作者本轮要的范围：${routing.scope || '按作者本轮原话，不扩大。'}`);
  if (step.readOnly) {
    lines.push(
      '- 这是只读请求：只回答、分析或给意见，不创建、修改、删除任何文件，也不交接给会改文件的角色。',
    );
  }
  if (routing.write_content === false) {
    lines.push('- 作者这一轮不要正文：不要创建或改写 draft / script 正文。');
  }
  if (routing.requested_file_types.length > 0) {
    lines.push(`- 作者要的产物类型：${routing.requested_file_types.join('、')}。`);
  }
  if (step.clarifyFirst) {
    lines.push(
      '- 作者的要求还不具体：先用 request_clarification 问清楚要改哪里、改成什么样；这一轮不改文件，也不交接。',
    );
  }
  if (PLANNING_AGENTS.includes(step.role) && step.remaining.includes('writer')) {
    lines.push('- 规划完成后本轮会直接交给 writer 写正文：不要停下来问作者要不要继续。');
  }
  if (plan.generationMode === 'fast') lines.push('- 快速模式：直接交付，不等审稿。');
  lines.push('- 已经完成的不重做；只交付作者要的，不追加作者没要的产出。');
  return lines.join('\n');
}
