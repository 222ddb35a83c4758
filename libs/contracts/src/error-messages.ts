import { ERROR_CATALOG, type ErrorCode } from './errors.ts';
import type { UiLanguage } from './roles.ts';

/**
 * The catalog's author-facing messages in Chinese, next to the English ones in errors.ts
 * (docs/protocol.md, "Error messages in the author's language"). The code never changes with the
 * language; only `message` does. Adding a code: its English text goes in ERROR_CATALOG, its
 * Chinese text here — libs/contracts/test/errors.test.ts fails while either is missing.
 */
export const ERROR_MESSAGES_ZH: { readonly [code in ErrorCode]?: string } = {
  invalid_request: '请求无效。',
  unauthorized: '需要先登录。',
  forbidden: '你在这个项目里没有这项操作的权限。',
  not_found: '找不到。',
  session_busy: '这个会话已有一轮正在进行。',
  no_active_run: '这个会话当前没有进行中的一轮。',
  version_conflict: '打开之后文件已被修改，请重新加载后再试。',
  restore_conflict: '之后有文件被修改过，恢复会撤销这些修改。请先查看，或强制恢复。',
  artifact_not_open: '这份 AI 草稿已经被接受或拒绝。',
  member_exists: '此人已经是这个项目的成员。',
  email_taken: '这个邮箱已经注册过账号。',
  payload_too_large: '请求内容太大。',
  method_not_allowed: '这个路径不支持该请求方法，请看 allow 响应头。',
  uri_too_long: '请求地址太长。',
  unsupported_media_type: '这里不接受这种内容类型，请发送 application/json。',
  headers_too_large: '请求头太大。',
  rate_limited: '请求太频繁，请稍后再试。',
  too_many_active_runs: '你进行中的对话已达上限。',
  steer_queue_full: '这一轮待处理的插话太多了。',
  quota_exhausted: '你的 AI 写作额度已用完。',
  cost_cap_reached: '今天的用量已达上限。',
  service_unavailable: '服务暂时不可用，请重试。',
  internal_error: '我们这边出了问题，请重试。',
  model_error: '写作模型没有给出回答，请重试。',
  model_unavailable: '写作模型暂时不可用，请稍后再试。',
  context_unavailable: '没能准备好项目上下文，请重试。',
  invalid_bus_message: '内部消息格式有误，这一轮已结束。',
  worker_lost: '执行这一步的进程没有响应，请重试。',
  run_timeout: '这一轮用时太长，已结束。',
  storage_unavailable: '项目暂时无法保存，请重试。',
  empty_file_unwritten: '助手建了文件却没有写入正文，空文件已删除。请重试。',
  tool_failure_circuit_open: '有个工具接连失败，为避免浪费额度，这一轮已结束。',
};

/** The message for a code in a language; English when a translation is missing (the test catches that). */
export function errorMessage(code: ErrorCode, language: UiLanguage = 'en'): string {
  if (language === 'zh') return ERROR_MESSAGES_ZH[code] ?? ERROR_CATALOG[code].message;
  return ERROR_CATALOG[code].message;
}
