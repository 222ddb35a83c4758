import type { AgentRole } from '@quill/contracts';
import type { RoleDefinition } from '@quill/db';
import { type LlmSettings, type ModelTarget, modelFor, providersFromSettings } from '@quill/llm';
import { TOOL_SPECS } from '@quill/tools';
import { z } from 'zod';

/**
 * A role definition is what a session pins (docs/kernel.md "Definitions and pinning"): the
 * prompt, the tool set, the role's model on each provider with its output cap, and the step's
 * budgets. Where the providers are and how to reach them (URLs, keys, timeouts, breaker) is the
 * deployment's and stays in config.
 */
export interface DefinitionConfig extends LlmSettings {
  AGENT_TOOL_CALL_MAX_ITERATIONS: number;
  AGENT_MAX_OUTPUT_CONTINUATIONS: number;
  AGENT_SKILL_TOKEN_BUDGET: number;
  /** Appended to every role prompt a service carries (a deploy-time prompt change). */
  ROLE_PROMPT_REVISION: string;
}

/** What one step runs with, read from its session's pinned definition. */
export interface AppliedDefinition {
  prompt: string;
  /** The tool names the step offers and accepts. */
  tools: readonly string[];
  /** provider name → the role's model there. */
  targets: Readonly<Record<string, ModelTarget>>;
  maxOutputTokens?: number;
  maxToolTurns: number;
  maxOutputContinuations: number;
  skillTokenBudget: number;
}

/** The definition this build carries for `role`, from its code and its config. */
export function buildRoleDefinition(
  role: AgentRole,
  prompt: string,
  tools: readonly string[],
  config: DefinitionConfig,
): RoleDefinition {
  const revision = config.ROLE_PROMPT_REVISION.trim();
  const providers = providersFromSettings(config);
  const cap = providers[0]!.roleMaxOutputTokens?.[role] ?? providers[0]!.maxOutputTokens;
  return {
    prompt: revision ? `${prompt}\n${revision}` : prompt,
    tools: [...tools].sort(),
    model: {
      providers: Object.fromEntries(
        providers.map((provider) => {
          const target = modelFor(provider, role);
          return [provider.name, { model: target.model, max_input_tokens: target.maxInputTokens }];
        }),
      ),
      max_output_tokens: cap ?? null,
    },
    budget: {
      max_tool_turns: config.AGENT_TOOL_CALL_MAX_ITERATIONS,
      max_output_continuations: config.AGENT_MAX_OUTPUT_CONTINUATIONS,
      skill_token_budget: config.AGENT_SKILL_TOKEN_BUDGET,
    },
  };
}

// Stored definitions are read back leniently: a version recorded before its model or budget
// had this shape keeps its prompt and tools, and takes the rest from the build (applyDefinition).
const StoredModel = z.object({
  providers: z.record(
    z.string(),
    z.object({ model: z.string().min(1), max_input_tokens: z.number().int().positive() }),
  ),
  max_output_tokens: z.number().int().positive().nullable(),
});
const StoredBudget = z.object({
  max_tool_turns: z.number().int().positive(),
  max_output_continuations: z.number().int().nonnegative(),
  skill_token_budget: z.number().int().nonnegative(),
});
const StoredTools = z.array(z.string());

/**
 * The settings a step runs with: the pinned definition's, each part falling back to `own` (the
 * definition this build would seed) when the pin has none or records it in an older shape. A
 * pinned tool this build no longer has cannot be offered, so it is left out.
 */
export function applyDefinition(pinned: RoleDefinition | null, own: RoleDefinition): AppliedDefinition {
  const base = readDefinition(own);
  if (!pinned) return base;
  const model = StoredModel.safeParse(pinned.model);
  const budget = StoredBudget.safeParse(pinned.budget);
  const tools = StoredTools.safeParse(pinned.tools);
  return {
    prompt: typeof pinned.prompt === 'string' ? pinned.prompt : base.prompt,
    tools: tools.success ? offered(tools.data) : base.tools,
    ...(model.success ? modelPart(model.data) : { targets: base.targets, ...capOf(base) }),
    ...(budget.success ? budgetPart(budget.data) : budgetOf(base)),
  };
}

/**
 * A definition records its tools sorted (the order is not content); they are offered in the
 * registry's order, as before pinning, so the model's tool list keeps its shape. A name this
 * build has no tool for is left out.
 */
function offered(names: readonly string[]): string[] {
  const pinned = new Set(names);
  return Object.keys(TOOL_SPECS).filter((name) => pinned.has(name));
}

function readDefinition(definition: RoleDefinition): AppliedDefinition {
  return {
    prompt: definition.prompt,
    tools: offered(definition.tools),
    ...modelPart(StoredModel.parse(definition.model)),
    ...budgetPart(StoredBudget.parse(definition.budget)),
  };
}

function modelPart(
  model: z.infer<typeof StoredModel>,
): Pick<AppliedDefinition, 'targets' | 'maxOutputTokens'> {
  return {
    targets: Object.fromEntries(
      Object.entries(model.providers).map(([name, target]) => [
        name,
        { model: target.model, maxInputTokens: target.max_input_tokens },
      ]),
    ),
    ...(model.max_output_tokens === null ? {} : { maxOutputTokens: model.max_output_tokens }),
  };
}

function budgetPart(
  budget: z.infer<typeof StoredBudget>,
): Pick<AppliedDefinition, 'maxToolTurns' | 'maxOutputContinuations' | 'skillTokenBudget'> {
  return {
    maxToolTurns: budget.max_tool_turns,
    maxOutputContinuations: budget.max_output_continuations,
    skillTokenBudget: budget.skill_token_budget,
  };
}

const capOf = (applied: AppliedDefinition) =>
  applied.maxOutputTokens === undefined ? {} : { maxOutputTokens: applied.maxOutputTokens };
const budgetOf = (applied: AppliedDefinition) => ({
  maxToolTurns: applied.maxToolTurns,
  maxOutputContinuations: applied.maxOutputContinuations,
  skillTokenBudget: applied.skillTokenBudget,
});
