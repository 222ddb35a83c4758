import type { AgentRole, StepResult } from '@quill/contracts';

/**
 * Repeated-task detection (docs/agent-behaviour.md 预算, 「重复任务」): two agents handing the
 * same work back and forth without producing anything. The next step, agent R, is refused when
 * the three steps before it ran O, R, O (O another agent, so the run would become O→R→O→R) and
 * the last two of them — R's earlier turn and O's answer — wrote no file. R would then meet
 * exactly what it met last time, so the round trip cannot have moved the work.
 *
 * Review rounds are not counted here: the reviewer writes no file by design, and its rounds with
 * the writer are bounded by the review-round cap already (docs/agent-behaviour.md).
 *
 * The task is identified by the agent alone: handoff reasons are model-written and rephrase
 * between rounds, so comparing them would let a real ping-pong through.
 */
export function repeatsTask(
  results: ReadonlyMap<number, StepResult>,
  next: { step: number; role: AgentRole },
): boolean {
  const [threeBack, twoBack, oneBack] = [3, 2, 1].map((back) => results.get(next.step - back));
  if (!threeBack || !twoBack || !oneBack) return false;
  const other = oneBack.role;
  if (other === 'quality_reviewer' || next.role === 'quality_reviewer') return false;
  return (
    other !== next.role &&
    threeBack.role === other &&
    twoBack.role === next.role &&
    twoBack.files_written.length === 0 &&
    oneBack.files_written.length === 0
  );
}
