export { type CaptureEvent, createFileCapture, type FileCapture, normaliseFileBody } from './file-capture.ts';
export { createStepEmitter, type EmitterSettings, type StepEmitter } from './frame-emitter.ts';
export { runModelTurn, type TurnResult } from './model-turn.ts';
export { parseRoles, startRoleWorkers } from './role-service.ts';
export { createRoleTaskHandler, type RoleWorkerDependencies } from './role-worker.ts';
