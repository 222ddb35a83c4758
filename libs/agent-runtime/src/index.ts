export {
  type AgentTextShaper,
  createAgentTextShaper,
  type TextShaperOptions,
  withAuthorTextShaping,
} from './author-text-shaper.ts';
export { type ChatHoldEmitter, isBodyWrite, withChatHold } from './chat-hold.ts';
export {
  type CaptureEvent,
  createFileCapture,
  type FileCapture,
  type FileCaptureOptions,
  normaliseFileBody,
} from './file-capture.ts';
export { createStepEmitter, type EmitterSettings, type StepEmitter } from './frame-emitter.ts';
export { runModelTurn, type TurnResult } from './model-turn.ts';
export { createNoProgressGuard, REPEATED_READ_LIMIT } from './no-progress-guard.ts';
export { composeDirective, RUN_DIRECTIVE_HEADING, UNIFIED_EXECUTION_PROTOCOL } from './protocol.ts';
export { parseRoles, startRoleWorkers } from './role-service.ts';
export { createRoleTaskHandler, type RoleWorkerDependencies } from './role-worker.ts';
export {
  createModelCallBudget,
  createTokenBudget,
  SOFT_LANDING_TURNS,
  softLanding,
  tokenBudgetSpent,
} from './run-budget.ts';
export { decide } from './step-machine.ts';
export { classifyStepError, driveStep, type StepPorts } from './step-shell.ts';
export {
  initialStepState,
  type StepAction,
  type StepConfig,
  type StepEvent,
  type StepState,
  type StepWorld,
} from './step-state.ts';
export { createToolFailureBreaker, UNAVAILABLE_TOOL_THRESHOLD } from './tool-failure-breaker.ts';
export { createToolGate, type RequestScope, type ToolGate } from './tool-gate.ts';
