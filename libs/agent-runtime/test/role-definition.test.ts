import { toolNamesForRole } from '@quill/tools';
import { describe, expect, it } from 'vitest';
import { applyDefinition, buildRoleDefinition, type DefinitionConfig } from '../src/role-definition.ts';

/** docs/kernel.md "Definitions and pinning": what a role definition records and what a step applies. */
const config: DefinitionConfig = {
  LLM_PRIMARY_BASE_URL: 'http://127.0.0.1:4010/v1',
  LLM_PRIMARY_API_KEY: 'k',
  LLM_PRIMARY_MODEL: 'main-model',
  LLM_BACKUP_BASE_URL: 'http://127.0.0.1:4011/v1',
  LLM_BACKUP_MODEL: 'backup-model',
  LLM_MAX_INPUT_TOKENS: 64_000,
  LLM_ROLE_MODEL_OVERRIDES: 'writer=writer-model@32000',
  LLM_MAX_OUTPUT_TOKENS: 4096,
  LLM_ROLE_MAX_OUTPUT_TOKENS: 'writer=2048',
  LLM_CONNECT_TIMEOUT_S: 1,
  LLM_FIRST_TOKEN_TIMEOUT_S: 1,
  LLM_REQUEST_TIMEOUT_S: 1,
  LLM_BREAKER_FAILURE_THRESHOLD: 1,
  LLM_BREAKER_WINDOW_S: 1,
  LLM_BREAKER_COOLDOWN_S: 1,
  LLM_PIN_TTL_S: 1,
  AGENT_TOOL_CALL_MAX_ITERATIONS: 8,
  AGENT_MAX_OUTPUT_CONTINUATIONS: 2,
  AGENT_SKILL_TOKEN_BUDGET: 3000,
  ROLE_PROMPT_REVISION: '',
};

describe('buildRoleDefinition', () => {
  it('records the role’s model on each provider, its output cap, its sorted tools and its budgets; no URL or key', () => {
    const definition = buildRoleDefinition('writer', '写', ['query_files', 'create_file'], config);
    expect(definition).toEqual({
      prompt: '写',
      tools: ['create_file', 'query_files'],
      model: {
        providers: {
          primary: { model: 'writer-model', max_input_tokens: 32_000 },
          backup: { model: 'backup-model', max_input_tokens: 64_000 },
        },
        max_output_tokens: 2048,
      },
      budget: { max_tool_turns: 8, max_output_continuations: 2, skill_token_budget: 3000 },
    });
    expect(JSON.stringify(definition)).not.toContain('127.0.0.1');
  });

  it('another role’s override does not change this role’s definition', () => {
    const planner = buildRoleDefinition('planner', 'p', [], config);
    expect(
      buildRoleDefinition('planner', 'p', [], { ...config, LLM_ROLE_MODEL_OVERRIDES: 'writer=x' }),
    ).toEqual(planner);
    expect(planner.model).toMatchObject({ max_output_tokens: 4096 });
  });

  it('appends the deploy-time prompt revision', () => {
    expect(buildRoleDefinition('writer', '写', [], { ...config, ROLE_PROMPT_REVISION: ' 新 ' }).prompt).toBe(
      '写\n新',
    );
  });
});

describe('applyDefinition', () => {
  const own = buildRoleDefinition('writer', '新提示', ['create_file', 'query_files', 'load_skill'], config);
  const pinned = buildRoleDefinition('writer', '旧提示', ['query_files', 'retired_tool'], {
    ...config,
    LLM_BACKUP_BASE_URL: undefined,
    LLM_ROLE_MODEL_OVERRIDES: 'writer=old-model@16000',
    LLM_ROLE_MAX_OUTPUT_TOKENS: undefined,
    AGENT_TOOL_CALL_MAX_ITERATIONS: 3,
    AGENT_MAX_OUTPUT_CONTINUATIONS: 0,
    AGENT_SKILL_TOKEN_BUDGET: 500,
  });

  it('the pin wins for every part; a pinned tool this build no longer has is left out', () => {
    expect(applyDefinition(pinned, own)).toEqual({
      prompt: '旧提示',
      tools: ['query_files'],
      targets: { primary: { model: 'old-model', maxInputTokens: 16_000 } },
      maxOutputTokens: 4096,
      maxToolTurns: 3,
      maxOutputContinuations: 0,
      skillTokenBudget: 500,
    });
  });

  it('offers the role’s whole set in the registry’s order, as an unpinned step would', () => {
    const writer = buildRoleDefinition('writer', 'w', toolNamesForRole('writer'), config);
    expect(applyDefinition(writer, own).tools).toEqual(toolNamesForRole('writer'));
    const reviewer = buildRoleDefinition(
      'quality_reviewer',
      'r',
      toolNamesForRole('quality_reviewer'),
      config,
    );
    expect(applyDefinition(reviewer, own).tools).toEqual(toolNamesForRole('quality_reviewer'));
  });

  it('without a pin, the build’s own definition', () => {
    expect(applyDefinition(null, own)).toMatchObject({
      prompt: '新提示',
      // The registry's order, not the recorded (sorted) one.
      tools: ['create_file', 'query_files', 'load_skill'],
      targets: { primary: { model: 'writer-model' }, backup: { model: 'backup-model' } },
      maxOutputTokens: 2048,
      maxToolTurns: 8,
    });
  });

  it('a version recorded in the older shape keeps its prompt and tools and takes model and budgets from the build', () => {
    const older = {
      prompt: '旧提示',
      tools: ['query_files'],
      model: { primary: 'm', role_overrides: null },
      budget: { max_tool_turns: 'many' },
    };
    expect(applyDefinition(older, own)).toEqual({
      ...applyDefinition(null, own),
      prompt: '旧提示',
      tools: ['query_files'],
    });
  });
});
