import { frame, type SseFrame } from '@quill/contracts';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createAgentTextShaper, withAuthorTextShaping } from '../src/author-text-shaper.ts';
import { withChatHold } from '../src/chat-hold.ts';
import type { StepEmitter } from '../src/frame-emitter.ts';

/** What a step's model says, in order: chat text, a tool call with its result, a file body. */
type Event = { text: string } | { tool: string } | { file: string };

function recorder() {
  const seen: Array<{ kind: 'text' | 'file' | 'frame'; value: string }> = [];
  const inner: StepEmitter = {
    text: (delta) => seen.push({ kind: 'text', value: delta }),
    fileDelta: (_fileId, delta) => seen.push({ kind: 'file', value: delta }),
    thinking: () => undefined,
    emit: (value: SseFrame) => seen.push({ kind: 'frame', value: value.type }),
    close: async () => undefined,
    settle: async () => 0,
    framesPublished: 0,
  };
  return { inner, seen };
}

const run = 'run-1';
const call = (id: string) =>
  frame('tool_call', run, { agent: 'writer', tool_call_id: id, tool_name: 'query_files', arguments: {} });
const result = (id: string) =>
  frame('tool_result', run, {
    agent: 'writer',
    tool_call_id: id,
    tool_name: 'query_files',
    status: 'ok',
    summary: '',
  });

async function shown(events: Event[], authorLanguage: 'zh' | 'en', chunk = Number.POSITIVE_INFINITY) {
  const { inner, seen } = recorder();
  const emitter = withAuthorTextShaping(inner, { authorLanguage });
  for (const event of events) {
    if ('text' in event) {
      for (let at = 0; at < event.text.length; at += chunk) emitter.text(event.text.slice(at, at + chunk));
    } else if ('tool' in event) {
      emitter.emit(call(event.tool));
      emitter.emit(result(event.tool));
    } else {
      emitter.emit(
        frame('file_start', run, { agent: 'writer', file_id: 'f', title: '第三章', file_type: 'draft' }),
      );
      emitter.fileDelta('f', event.file);
    }
  }
  await emitter.close();
  return {
    text: seen
      .filter((item) => item.kind === 'text')
      .map((item) => item.value)
      .join(''),
    order: seen.map((item) => (item.kind === 'frame' ? item.value : item.kind)),
  };
}

const CASES: Array<[string, Event[], 'zh' | 'en', string]> = [
  [
    'English narration after a tool call is not shown to a Chinese-writing author',
    [
      { text: '好的，我先看看大纲。' },
      { tool: 'a' },
      { text: 'Let me check the characters too.' },
      { tool: 'b' },
      { text: '第三章的冲突已经清楚了。' },
    ],
    'zh',
    '好的，我先看看大纲。\n\n第三章的冲突已经清楚了。',
  ],
  [
    'English sentences right after a tool call go, the Chinese that follows them stays',
    [{ tool: 'a' }, { text: "I've read the outline. Now I'll write. 第三章写好了。" }],
    'zh',
    '第三章写好了。',
  ],
  [
    'English narration right before a tool call goes too',
    [{ text: 'I will read the outline first.\n' }, { tool: 'a' }, { text: '读完了。' }],
    'zh',
    '读完了。',
  ],
  [
    'narration right after a tool call that leads into a file body goes',
    [{ tool: 'a' }, { text: 'Here is the chapter:\n' }, { file: '正文' }, { text: '写完了。' }],
    'zh',
    '写完了。',
  ],
  [
    'an English author sees everything',
    [{ text: 'Let me check.' }, { tool: 'a' }, { text: 'Done reading.' }],
    'en',
    'Let me check.\n\nDone reading.',
  ],
  [
    'an English reply with no tool call next to it is shown to a Chinese-writing author',
    [{ text: 'The title Rain means the season, not the weather.' }],
    'zh',
    'The title Rain means the season, not the weather.',
  ],
  [
    'English inside Chinese prose stays',
    [{ tool: 'a' }, { text: '主角说：“OK, let us go.” 然后离开了。' }],
    'zh',
    '主角说：“OK, let us go.” 然后离开了。',
  ],
  [
    'single line breaks between prose lines become paragraph breaks',
    [{ text: '第一段。\n第二段。\n\n第三段。' }],
    'zh',
    '第一段。\n\n第二段。\n\n第三段。',
  ],
  [
    'lists, tables, headings and code keep their line breaks',
    [{ text: '要点：\n- 一\n- 二\n\n| a | b |\n| - | - |\n\n```\nx\ny\n```' }],
    'zh',
    '要点：\n- 一\n- 二\n\n| a | b |\n| - | - |\n\n```\nx\ny\n```',
  ],
];

describe('AgentTextShaper', () => {
  it.each(CASES)('%s', async (_name, events, language, expected) => {
    expect((await shown(events, language)).text).toBe(expected);
  });

  it('shows the same text however the model splits its deltas', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...CASES), fc.integer({ min: 1, max: 7 }), async (entry, chunk) => {
        const [, events, language, expected] = entry;
        expect((await shown(events, language, chunk)).text).toBe(expected);
      }),
    );
  });

  it('keeps frames in order: held text goes out before the frame that releases it', async () => {
    const { order } = await shown([{ text: '先说一句。' }, { tool: 'a' }, { text: '再说一句。' }], 'zh');
    expect(order).toEqual(['text', 'tool_call', 'tool_result', 'text']);
  });

  it('streams Chinese text at once and holds English only until its sentence ends', () => {
    const shaper = createAgentTextShaper({ authorLanguage: 'zh' });
    shaper.toolCall();
    expect(shaper.text('Let me')).toBe('');
    expect(shaper.text(' see. 好')).toBe('好');
    expect(shaper.text('的')).toBe('的');
  });

  it('wraps the chat hold and keeps its report reachable', async () => {
    const { inner } = recorder();
    const emitter = withAuthorTextShaping(withChatHold(inner, { holdChat: false }), { authorLanguage: 'zh' });
    emitter.text('你好。');
    await emitter.close();
    expect(emitter.report()).toEqual({});
    expect(emitter.snapshot().last).toBe('text');
  });
});

describe('journal checkpoints', () => {
  it('a settle between the tool turn and the next text is no boundary', async () => {
    const { inner, seen } = recorder();
    const emitter = withAuthorTextShaping(inner, { authorLanguage: 'zh' });
    emitter.emit(call('a'));
    emitter.emit(result('a'));
    await emitter.settle();
    emitter.text("I've read the outline. ");
    await emitter.settle();
    emitter.text('第三章写好了。');
    await emitter.close();
    expect(seen.filter((item) => item.kind === 'text').map((item) => item.value)).toEqual(['第三章写好了。']);
  });
});
