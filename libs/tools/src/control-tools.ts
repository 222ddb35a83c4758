import { AgentRole } from '@quill/contracts';
import { z } from 'zod';
import { failure, ok, type ToolRunState, type ToolSpec } from './types.ts';

/**
 * Tools that steer the workflow rather than the project. They only validate and record the
 * request in the step's state; the worker ends the step and reports it in the step result, and
 * the router decides (a handoff may be refused, e.g. on a read-only request).
 */
const HandoffArgs = z.strictObject({
  to_agent: AgentRole,
  reason: z.string().trim().min(1).max(1000).describe('What is done and what the next agent should do.'),
});

export const handoffToAgentTool: ToolSpec<typeof HandoffArgs> = {
  name: 'handoff_to_agent',
  description:
    'Hand the work to another agent (planner, hook_designer, writer, quality_reviewer) with a short reason. Your turn ends after this call.',
  parameters: HandoffArgs,
  writesFiles: false,
  async handle(args, context) {
    if (args.to_agent === context.role) {
      return failure('invalid_handoff_target', `You are ${context.role}; hand off to a different agent.`);
    }
    const already = alreadyYielding(context.state);
    if (already) return already;
    context.state.handoff = { to_agent: args.to_agent, reason: args.reason };
    return ok(`Handing off to ${args.to_agent}.`, { to_agent: args.to_agent, reason: args.reason });
  },
};

const ClarificationArgs = z.strictObject({
  question: z.string().trim().min(1).max(1000),
  options: z.array(z.string().trim().min(1).max(200)).max(5).optional().describe('Answers to choose from.'),
});

export const requestClarificationTool: ToolSpec<typeof ClarificationArgs> = {
  name: 'request_clarification',
  description:
    'Ask the author a question you need answered before you can continue; the workflow pauses for the answer. Your turn ends after this call.',
  parameters: ClarificationArgs,
  writesFiles: false,
  async handle(args, context) {
    const already = alreadyYielding(context.state);
    if (already) return already;
    const options = (args.options ?? []).map((option, index) => `${index + 1}. ${option}`);
    const question = [args.question, ...options].join('\n');
    context.state.clarification = { question };
    return ok('Question sent to the author; wait for the answer.', { question });
  },
};

const AuthorQuestionArgs = z.strictObject({
  question: z.string().trim().min(1).max(500).describe('One question for the author, in their language.'),
});

/**
 * A question for the author that need not stop the work (docs/agent-behaviour.md 「只给作者一份总结」):
 * recorded as data, so when the delivery goes to review the reviewer receives it as a question
 * — the router never guesses questions from punctuation in prose. Otherwise the router shows it
 * to the author after the agent's text.
 */
export const noteQuestionForAuthorTool: ToolSpec<typeof AuthorQuestionArgs> = {
  name: 'note_question_for_author',
  description:
    'Record a question for the author that does not block your work (the author reads it with the final summary). Use request_clarification instead when you cannot continue without the answer.',
  parameters: AuthorQuestionArgs,
  writesFiles: false,
  async handle(args, context) {
    if (context.state.authorQuestions.includes(args.question)) {
      return ok('This question is already noted.', { question: args.question });
    }
    context.state.authorQuestions.push(args.question);
    return ok('Question noted for the author.', { question: args.question });
  },
};

function alreadyYielding(state: ToolRunState) {
  if (state.handoff) {
    return failure('already_yielding', `You already handed off to ${state.handoff.to_agent} in this turn.`);
  }
  if (state.clarification) return failure('already_yielding', 'You already asked the author a question.');
  return undefined;
}
