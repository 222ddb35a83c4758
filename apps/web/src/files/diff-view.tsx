import type { DiffLine } from './line-diff.ts';

/** The lines of a comparison, marked by side; the conflict, version and artifact views share it. */
export function DiffView({ lines, testId }: { lines: readonly DiffLine[]; testId: string }) {
  return (
    <pre data-testid={testId}>
      {lines.map((line, index) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: lines of a fixed comparison, never reordered
        <div key={index} className={`diff-${line.kind}`}>
          {{ same: '  ', theirs: '− ', mine: '+ ' }[line.kind]}
          {line.text}
        </div>
      ))}
    </pre>
  );
}
