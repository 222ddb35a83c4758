/**
 * Project notes keep who vouched for each entry (docs/agent-behaviour.md 「项目备注由作者维护确认来源」): the
 * author-confirmed section and older untagged entries are the author's and survive any agent
 * update (even an empty one); the agent only ever replaces the AI-proposed section. The three
 * share one 4000-character budget. The author's own editor saves the whole field directly.
 */
export const NOTES_MAX_CHARS = 4000;
export const CONFIRMED_MARKER = '【作者确认】';
export const PROPOSED_MARKER = '【AI 提议】';

export interface ProjectNotes {
  untagged: string;
  confirmed: string;
  proposed: string;
}

export function parseNotes(notes: string): ProjectNotes {
  const sections: ProjectNotes = { untagged: '', confirmed: '', proposed: '' };
  let current: keyof ProjectNotes = 'untagged';
  const lines: Record<keyof ProjectNotes, string[]> = { untagged: [], confirmed: [], proposed: [] };
  for (const line of notes.split('\n')) {
    const marker = line.trim();
    if (marker === CONFIRMED_MARKER) current = 'confirmed';
    else if (marker === PROPOSED_MARKER) current = 'proposed';
    else lines[current].push(line);
  }
  for (const key of Object.keys(sections) as Array<keyof ProjectNotes>)
    sections[key] = lines[key].join('\n').trim();
  return sections;
}

export function renderNotes(notes: ProjectNotes): string {
  return [
    notes.untagged,
    notes.confirmed && `${CONFIRMED_MARKER}\n${notes.confirmed}`,
    notes.proposed && `${PROPOSED_MARKER}\n${notes.proposed}`,
  ]
    .filter(Boolean)
    .join('\n\n');
}

/**
 * The notes with the agent's proposals in place of the old ones. Section markers inside the
 * proposals are dropped: quoting, numbering or promising cannot move an entry into the author's
 * sections.
 */
export function withProposals(stored: string, proposals: string): { notes: string; over: number } {
  const current = parseNotes(stored);
  const cleaned = proposals
    .split('\n')
    .filter((line) => ![CONFIRMED_MARKER, PROPOSED_MARKER].includes(line.trim()))
    .join('\n')
    .trim();
  const notes = renderNotes({ ...current, proposed: cleaned });
  return { notes, over: Math.max(0, notes.length - NOTES_MAX_CHARS) };
}
