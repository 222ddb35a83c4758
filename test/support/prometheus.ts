/** One sample of a Prometheus text exposition: `name{label="value",…} value`. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export function parsePrometheus(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (!match) continue;
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g))
      labels[pair[1]!] = pair[2]!;
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

/** The sum of every sample named `name` whose labels include `labels`. */
export function sumOf(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  return samples
    .filter(
      (sample) =>
        sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value),
    )
    .reduce((sum, sample) => sum + sample.value, 0);
}

export async function scrape(opsUrl: string): Promise<Sample[]> {
  const response = await fetch(`${opsUrl}/metrics`);
  if (response.status !== 200) throw new Error(`${opsUrl}/metrics answered ${response.status}`);
  return parsePrometheus(await response.text());
}
