import { z } from 'zod';
import { failure, ok, type ToolContext, type ToolResult, type ToolSpec } from './types.ts';

const MAX_CALLS = 8;
/** Sub-calls in flight at once: enough to overlap database reads without starving the pool. */
export const PARALLEL_CONCURRENCY = 3;

const ParallelArgs = z.strictObject({
  calls: z
    .array(
      z.strictObject({
        tool: z.string().min(1).max(64),
        arguments: z.record(z.string(), z.unknown()),
      }),
    )
    .min(1)
    .max(MAX_CALLS),
});

export interface ParallelWiring {
  /** The registry's executeTool (never throws). */
  execute(name: string, rawArguments: string, context: ToolContext): Promise<ToolResult>;
  /** Whether the role may call this tool inside parallel_execute (read-only, independent). */
  allowed(name: string, context: ToolContext): boolean;
}

/**
 * Runs several read-only tool calls at once with bounded concurrency, reporting progress on the
 * tool card. Writes never run here: their order matters and each needs its own result.
 */
export function createParallelExecuteTool(wiring: ParallelWiring): ToolSpec<typeof ParallelArgs> {
  return {
    name: 'parallel_execute',
    description: `Run up to ${MAX_CALLS} read-only tool calls (e.g. several query_files reads) at once. Each call is {tool, arguments}; results come back in order.`,
    parameters: ParallelArgs,
    writesFiles: false,
    async handle(args, context) {
      const refused = args.calls
        .filter((call) => !wiring.allowed(call.tool, context))
        .map((call) => call.tool);
      if (refused.length > 0) {
        return failure(
          'unsupported_parallel_tool',
          `parallel_execute runs only read-only tools; not allowed here: ${[...new Set(refused)].join(', ')}. Nothing was run.`,
        );
      }
      const results: ToolResult[] = new Array(args.calls.length);
      let next = 0;
      let completed = 0;
      const worker = async () => {
        while (next < args.calls.length) {
          const index = next++;
          const call = args.calls[index]!;
          const { reportProgress: _own, ...subContext } = context;
          results[index] = await wiring.execute(call.tool, JSON.stringify(call.arguments), subContext);
          completed++;
          context.reportProgress?.({ completed, total: args.calls.length, message: `${call.tool} finished` });
        }
      };
      await Promise.all(Array.from({ length: Math.min(PARALLEL_CONCURRENCY, args.calls.length) }, worker));
      const failed = results.filter((result) => result.status === 'error').length;
      return ok(`Ran ${results.length} call(s)${failed ? `, ${failed} failed` : ''}.`, {
        results: results.map((result, index) => ({ tool: args.calls[index]!.tool, ...result })),
      });
    },
  };
}
