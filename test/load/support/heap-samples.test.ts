import { describe, expect, it } from 'vitest';
import { allocationsByFunction, type HeapProfileNode, type SamplingHeapProfile } from './heap-samples.ts';

const node = (id: number, functionName: string, children: HeapProfileNode[] = []): HeapProfileNode => ({
  id,
  // One line per function: a recursive call is the same function at another node.
  callFrame: { functionName, url: `file:///repo/libs/bus/src/${functionName}.ts`, lineNumber: 0 },
  children,
});

// (root) → publish → encode; (root) → read → read (recursive) → decode
const profile: SamplingHeapProfile = {
  head: node(1, '(root)', [
    node(2, 'publish', [node(3, 'encode')]),
    node(4, 'read', [node(5, 'read', [node(6, 'decode')])]),
  ]),
  samples: [
    { nodeId: 3, size: 100 },
    { nodeId: 3, size: 50 },
    { nodeId: 2, size: 10 },
    { nodeId: 6, size: 40 },
    { nodeId: 5, size: 5 },
  ],
};

describe('a sampling heap profile summed by function', () => {
  it('gives each sample to the function that allocated it', () => {
    const { total, bytes } = allocationsByFunction(profile, { inclusive: false });
    expect(total).toBe(205);
    expect(Object.fromEntries([...bytes].map(([label, value]) => [label.split(' ')[0], value]))).toEqual({
      encode: 150,
      publish: 10,
      decode: 40,
      read: 5,
    });
  });

  it('with inclusive, also to every caller, a recursive one once per sample', () => {
    const { bytes } = allocationsByFunction(profile, { inclusive: true });
    expect(bytes.get('publish libs/bus/src/publish.ts:1')).toBe(160);
    expect(bytes.get('(root) libs/bus/src/(root).ts:1')).toBe(205);
    // `read` is on the decode sample's stack twice and counts its 40 bytes once, not 80.
    expect(bytes.get('read libs/bus/src/read.ts:1')).toBe(45);
  });
});
