import { describe, expect, it } from 'vitest';
import { type CaptureEvent, createFileCapture, type FileCaptureOptions } from '../src/file-capture.ts';

/** Chat text and captured bodies as the model turn assembles them from the events. */
function run(deltas: string[], options: FileCaptureOptions = {}) {
  const capture = createFileCapture(options);
  const events: CaptureEvent[] = deltas.flatMap((delta) => capture.feed(delta));
  events.push(...capture.finish());
  let text = '';
  const files: string[] = [];
  for (const event of events) {
    if (event.kind === 'text') text += event.text;
    else if (event.kind === 'file_open') files.push('');
    else if (event.kind === 'file_delta') files[files.length - 1] += event.text;
  }
  return { text, files, capturing: capture.capturing };
}

/** The same reply split at every point (two deltas) and one character at a time. */
function everySplit(reply: string, options: FileCaptureOptions = {}) {
  const outcomes = [run([...reply], options)];
  for (let at = 0; at <= reply.length; at++)
    outcomes.push(run([reply.slice(0, at), reply.slice(at)], options));
  return outcomes;
}

const noPendingFile = { canOpen: () => false };

describe('file capture: fenced code blocks', () => {
  it('keeps tags inside ``` fences as literal chat text, at every split point', () => {
    const reply = '格式示例：\n```\n<file>\n正文\n</file>\n```\n就这样。';
    for (const outcome of everySplit(reply)) {
      expect(outcome).toEqual({ text: reply, files: [], capturing: false });
    }
  });

  it('captures a real body after the fence closes', () => {
    const reply = '```md\n<file>x</file>\n```\n<file>\n第一章\n</file>\n写好了。';
    for (const outcome of everySplit(reply)) {
      expect(outcome).toEqual({
        text: '```md\n<file>x</file>\n```\n写好了。',
        files: ['\n第一章\n'],
        capturing: false,
      });
    }
  });
});

describe('file capture: inline mentions', () => {
  it.each(['正文要用 <file> 标签包住。', '写在 `<file>` 和 `</file>` 之间。', 'a<file>b'])(
    'keeps %j as chat text even while a file waits for its body',
    (reply) => {
      for (const outcome of everySplit(reply)) {
        expect(outcome).toEqual({ text: reply, files: [], capturing: false });
      }
    },
  );

  it('opens a capture for a <file> that ends its line', () => {
    const reply = '正文如下：<file>\n雨夜。\n</file>';
    for (const outcome of everySplit(reply)) {
      expect(outcome).toEqual({ text: '正文如下：', files: ['\n雨夜。\n'], capturing: false });
    }
  });
});

describe('file capture: lone tag lines in IDLE', () => {
  it('drops <file> and </file> alone on their lines when no file waits for a body', () => {
    const reply = '好的。\n<file>\n雨夜。\n</file>\n完成。';
    for (const outcome of everySplit(reply, noPendingFile)) {
      expect(outcome).toEqual({ text: '好的。\n雨夜。\n完成。', files: [], capturing: false });
    }
  });

  it('drops a stray </file> line even when a file could open, and a trailing lone tag at the end', () => {
    for (const outcome of everySplit('写完了。\n</file>\n还有话。\n  </file>  ')) {
      expect(outcome.text).toBe('写完了。\n还有话。\n  ');
      expect(outcome.files).toEqual([]);
    }
  });

  it('keeps a tag that shares its line with other text', () => {
    const reply = '<file> 是标签\n</file>结束';
    for (const outcome of everySplit(reply, noPendingFile)) {
      expect(outcome).toEqual({ text: reply, files: [], capturing: false });
    }
  });
});

describe('file capture: continuing a cut-off body', () => {
  it('starts inside a capture and closes on </file>', () => {
    const capture = createFileCapture({ capturing: true });
    expect(capture.capturing).toBe(true);
    expect(capture.feed('接着写。</fi')).toEqual([{ kind: 'file_delta', text: '接着写。' }]);
    expect(capture.feed('le>\n好了')).toEqual([{ kind: 'file_close' }, { kind: 'text', text: '好了' }]);
    expect(capture.finish()).toEqual([]);
  });
});
