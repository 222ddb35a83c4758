import { describe, expect, it } from 'vitest';
import { mergeRecord, mergeTasks } from '../src/state-merge-json.ts';

const task = (id: string, status = 'todo') => ({ id, title: id, status });

describe('mergeRecord: per key, three-way', () => {
  it('takes each side’s own change and names a key both changed differently', () => {
    expect(mergeRecord({ a: 1 }, { a: 1, b: 2 }, { a: 1, c: 3 })).toEqual({
      kind: 'merged',
      value: { a: 1, b: 2, c: 3 },
    });
    // A key removed on one side and untouched on the other is removed.
    expect(mergeRecord({ a: 1, b: 2 }, { a: 1, b: 2 }, { a: 1 })).toEqual({
      kind: 'merged',
      value: { a: 1 },
    });
    // The same change on both sides is no conflict.
    expect(mergeRecord({ a: 1 }, { a: 2 }, { a: 2 })).toEqual({ kind: 'merged', value: { a: 2 } });
    expect(mergeRecord({ a: 1, b: 1 }, { a: 2, b: 2 }, { a: 3, b: 3 })).toEqual({
      kind: 'conflict',
      conflicts: ['a', 'b'],
    });
    // Removed on one side, changed on the other: a conflict.
    expect(mergeRecord({ a: 1 }, {}, { a: 2 })).toEqual({ kind: 'conflict', conflicts: ['a'] });
  });
});

describe('mergeTasks: per task id, three-way', () => {
  it('merges disjoint task changes, keeps additions of both sides, names a task both changed', () => {
    const base = [task('t1'), task('t2')];
    const current = [task('t1', 'done'), task('t2'), task('t3')];
    const incoming = [task('t1'), task('t2', 'blocked'), task('t4')];
    expect(mergeTasks(base, current, incoming)).toEqual({
      kind: 'merged',
      value: [task('t1', 'done'), task('t2', 'blocked'), task('t3'), task('t4')],
    });
    expect(mergeTasks(base, current, [task('t1', 'blocked'), task('t2')])).toEqual({
      kind: 'conflict',
      conflicts: ['task:t1'],
    });
    // A task removed on one side only is removed.
    expect(mergeTasks(base, [task('t1')], [task('t1'), task('t2'), task('t5')])).toEqual({
      kind: 'merged',
      value: [task('t1'), task('t5')],
    });
  });

  it('keeps the order of the side that reordered', () => {
    const base = [task('t1'), task('t2'), task('t3')];
    expect(mergeTasks(base, base, [task('t3'), task('t1'), task('t2')])).toEqual({
      kind: 'merged',
      value: [task('t3'), task('t1'), task('t2')],
    });
    expect(
      mergeTasks(base, [task('t2'), task('t1'), task('t3')], [task('t1'), task('t2'), task('t3', 'done')]),
    ).toEqual({
      kind: 'merged',
      value: [task('t2'), task('t1'), task('t3', 'done')],
    });
  });
});
