import { describe, expect, it } from 'vitest';
import { type FileNow, fileStep, planRestore } from '../src/gateway/restore-plan.ts';

/** The pure restore rules (docs/kernel.md "Snapshots and undo"), table by table. */
const now = (overrides: Partial<FileNow> = {}): FileNow => ({
  id: 'f',
  version: 3,
  title: '第一章',
  folder: '',
  deleted: false,
  ...overrides,
});
const target = { id: 'f', version: 1, title: '第一章', folder: '' };

describe('fileStep', () => {
  it.each([
    ['same version and place: nothing', now({ version: 1 }), target, null],
    [
      'text moved on: its old version again',
      now(),
      target,
      { textOf: 1, rename: null, delete: false, undelete: false },
    ],
    [
      'renamed only',
      now({ version: 1, title: '序章' }),
      target,
      { textOf: null, rename: { title: '第一章', folder: '' }, delete: false, undelete: false },
    ],
    ['deleted since: back', now({ version: 1, deleted: true }), target, { undelete: true, textOf: null }],
    ['not in the target: deleted', now(), undefined, { delete: true }],
    ['not in the target and already deleted: nothing', now({ deleted: true }), undefined, null],
  ] as const)('%s', (_label, current, wanted, expected) => {
    const step = fileStep('f', current, wanted);
    if (expected === null) expect(step).toBeNull();
    else expect(step).toMatchObject(expected);
  });

  it('a file that no longer exists at all is skipped', () => {
    expect(fileStep('f', undefined, target)).toBeNull();
  });
});

describe('planRestore', () => {
  const base = {
    scope: ['f', 'g'],
    target: new Map([['f', target]]),
    current: new Map([
      ['f', now()],
      ['g', now({ id: 'g', title: '新文件' })],
    ]),
  };

  it('lists a conflict only for a file it would change and someone changed since', () => {
    const plan = planRestore({
      ...base,
      blocking: new Map([['g', { changedBy: 'author' as const, runId: null }]]),
      force: false,
    });
    expect(plan.steps.map((step) => step.fileId)).toEqual(['f', 'g']);
    expect(plan.conflicts).toEqual([{ fileId: 'g', title: '新文件', changedBy: 'author', runId: null }]);
  });

  it('force plans the same steps with no conflicts', () => {
    const plan = planRestore({
      ...base,
      blocking: new Map([['g', { changedBy: 'author' as const, runId: null }]]),
      force: true,
    });
    expect(plan.steps).toHaveLength(2);
    expect(plan.conflicts).toEqual([]);
  });

  it('a change to a file already in its target state is no conflict', () => {
    const plan = planRestore({
      scope: ['f'],
      target: new Map([['f', target]]),
      current: new Map([['f', now({ version: 1 })]]),
      blocking: new Map([['f', { changedBy: 'run' as const, runId: 'r' }]]),
      force: false,
    });
    expect(plan).toEqual({ steps: [], restoreNotes: false, conflicts: [] });
  });

  it('notes: restored when they differ, a conflict when changed since', () => {
    const plan = planRestore({
      scope: [],
      target: new Map(),
      current: new Map(),
      blocking: new Map([[null, { changedBy: 'author' as const, runId: null }]]),
      notes: { target: '旧', current: '新' },
      force: false,
    });
    expect(plan.restoreNotes).toBe(true);
    expect(plan.conflicts).toEqual([{ fileId: null, title: '', changedBy: 'author', runId: null }]);
    const same = planRestore({
      scope: [],
      target: new Map(),
      current: new Map(),
      blocking: new Map(),
      notes: { target: '旧', current: '旧' },
      force: false,
    });
    expect(same.restoreNotes).toBe(false);
  });
});
