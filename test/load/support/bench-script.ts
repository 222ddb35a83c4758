import { spawn } from 'node:child_process';
import { REPO_ROOT } from '../../support/service-process.ts';

/**
 * Runs the benchmark `test/load/<name>.ts` in a process of its own, echoing its output, and
 * resolves with its last JSON line (the figures every benchmark prints last; undefined when it
 * printed none) and its exit code.
 */
export function runBenchScript(
  name: string,
  args: readonly string[],
): Promise<{ result: unknown; code: number | null }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [`test/load/${name}.ts`, ...args], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      process.stdout.write(chunk);
    });
    child.on('exit', (code) => {
      const line = output
        .trim()
        .split('\n')
        .reverse()
        .find((candidate) => candidate.startsWith('{"bench"'));
      resolve({ result: line ? JSON.parse(line) : undefined, code });
    });
  });
}
