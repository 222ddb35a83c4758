import type { Script, ScriptMatch, Step } from './script-schema.ts';

export interface RequestIdentity {
  runId: string | undefined;
  role: string | undefined;
}

export type ScriptLookup =
  | { kind: 'step'; step: Step }
  | { kind: 'exhausted'; match: ScriptMatch }
  | { kind: 'none' };

interface QueuedScript {
  match: ScriptMatch;
  steps: Step[];
  strict: boolean;
}

export interface ScriptStore {
  add(script: Script): void;
  clear(): void;
  /** Consumes the next step of the newest script matching the request. */
  next(identity: RequestIdentity): ScriptLookup;
}

export function createScriptStore(): ScriptStore {
  // Newest first: a test that adds a script later means it to take precedence.
  let scripts: QueuedScript[] = [];
  return {
    add(script) {
      scripts.unshift({ match: script.match, steps: [...script.responses], strict: script.strict });
    },
    clear() {
      scripts = [];
    },
    next(identity) {
      for (const script of scripts) {
        if (!matches(script.match, identity)) continue;
        const step = script.steps.shift();
        if (step === undefined) {
          // Only strict scripts stay queued once empty: they keep failing loudly instead of
          // letting the default replies hide a test that made more calls than it scripted.
          if (script.strict) return { kind: 'exhausted', match: script.match };
          continue;
        }
        if (script.steps.length === 0 && !script.strict) {
          scripts = scripts.filter((other) => other !== script);
        }
        return { kind: 'step', step };
      }
      return { kind: 'none' };
    },
  };
}

function matches(match: ScriptMatch, identity: RequestIdentity): boolean {
  if (match.run_id !== undefined && match.run_id !== identity.runId) return false;
  if (match.role !== undefined && match.role !== identity.role) return false;
  return true;
}
