import { describe, expect, it } from 'vitest';
import { type CaptureEvent, createFileCapture, normaliseFileBody } from '../src/file-capture.ts';

/** Text and file body as a caller would assemble them from the events. */
function assemble(events: CaptureEvent[]) {
  let text = '';
  const files: string[] = [];
  let open = false;
  for (const event of events) {
    if (event.kind === 'text') text += event.text;
    else if (event.kind === 'file_open') {
      expect(open).toBe(false);
      open = true;
      files.push('');
    } else if (event.kind === 'file_delta') {
      expect(open).toBe(true);
      files[files.length - 1] += event.text;
    } else {
      expect(open).toBe(true);
      open = false;
    }
  }
  return { text, files, open };
}

function feedAll(deltas: string[]) {
  const capture = createFileCapture();
  const events = deltas.flatMap((delta) => capture.feed(delta));
  events.push(...capture.finish());
  return { events, capturing: capture.capturing };
}

describe('createFileCapture', () => {
  it('passes plain text through', () => {
    const { events, capturing } = feedAll(['Hello, ', 'world. 1 < 2 and a <b> tag.']);
    expect(assemble(events)).toEqual({ text: 'Hello, world. 1 < 2 and a <b> tag.', files: [], open: false });
    expect(events.every((event) => event.kind === 'text')).toBe(true);
    expect(capturing).toBe(false);
  });

  it('captures a whole <file> body arriving in one delta', () => {
    const capture = createFileCapture();
    expect(capture.feed('<file>\n第一章\n雨夜。\n</file>')).toEqual([
      { kind: 'file_open' },
      { kind: 'file_delta', text: '\n第一章\n雨夜。\n' },
      { kind: 'file_close' },
    ]);
    expect(capture.capturing).toBe(false);
    expect(capture.finish()).toEqual([]);
  });

  it('keeps text before and after the file apart from the body', () => {
    const capture = createFileCapture();
    expect(capture.feed('Here it is:\n<file>body</file>\nDone.')).toEqual([
      { kind: 'text', text: 'Here it is:\n' },
      { kind: 'file_open' },
      { kind: 'file_delta', text: 'body' },
      { kind: 'file_close' },
      { kind: 'text', text: 'Done.' },
    ]);
  });

  it('drops the line break after </file> however the reply is split, and only that one', () => {
    for (const lineBreak of ['\n', '\r\n']) {
      const reply = `<file>\n正文\n</file>${lineBreak}\n写完了。\n</file>\n`;
      for (let first = 0; first <= reply.length; first++) {
        for (let second = first; second <= reply.length; second++) {
          const deltas = [reply.slice(0, first), reply.slice(first, second), reply.slice(second)];
          // The second line break is the author's blank line, kept; a stray lone tag line is dropped.
          expect(assemble(feedAll(deltas).events), `splits ${first},${second}`).toEqual({
            text: '\n写完了。\n',
            files: ['\n正文\n'],
            open: false,
          });
        }
      }
    }
  });

  it('keeps chat text that follows </file> on the same line', () => {
    const { events } = feedAll(['<file>x</file>', ' 已保存']);
    expect(assemble(events)).toEqual({ text: ' 已保存', files: ['x'], open: false });
  });

  it('reconstructs text and body exactly at every split point of the tags', () => {
    const before = 'Intro <fi not a tag, </file> outside is text. ';
    const body = '\n# 标题\n<b>bold</b> and </fil partial and <file> inside stays body\n';
    const after = ' Outro <';
    const reply = `${before}<file>${body}</file>${after}`;
    for (let first = 0; first <= reply.length; first++) {
      const { events, capturing } = feedAll([reply.slice(0, first), reply.slice(first)]);
      expect(assemble(events), `split at ${first}`).toEqual({
        text: before + after,
        files: [body],
        open: false,
      });
      expect(capturing).toBe(false);
    }
  });

  it('reconstructs exactly when fed one character at a time', () => {
    const reply = 'a<\n<file>>x</</file>>b';
    const { events } = feedAll([...reply]);
    expect(assemble(events)).toEqual({ text: 'a<\n>b', files: ['>x</'], open: false });
  });

  it('reconstructs at every pair of split points around both tags', () => {
    const reply = 'ab\n<file>cd</file>ef';
    for (let first = 0; first <= reply.length; first++) {
      for (let second = first; second <= reply.length; second++) {
        const deltas = [reply.slice(0, first), reply.slice(first, second), reply.slice(second)];
        expect(assemble(feedAll(deltas).events), `splits ${first},${second}`).toEqual({
          text: 'ab\nef',
          files: ['cd'],
          open: false,
        });
      }
    }
  });

  it('holds back a partial tag until the next delta decides it', () => {
    const capture = createFileCapture();
    expect(capture.feed('See\n<fi')).toEqual([{ kind: 'text', text: 'See\n' }]);
    expect(capture.feed('le>')).toEqual([{ kind: 'file_open' }]);
    expect(capture.feed('x</fi')).toEqual([{ kind: 'file_delta', text: 'x' }]);
    expect(capture.feed('nal')).toEqual([{ kind: 'file_delta', text: '</final' }]);
  });

  it('finish() releases a held partial tag as text', () => {
    const capture = createFileCapture();
    expect(capture.feed('the end <fi')).toEqual([{ kind: 'text', text: 'the end ' }]);
    expect(capture.finish()).toEqual([{ kind: 'text', text: '<fi' }]);
    expect(capture.finish()).toEqual([]);
    expect(capture.capturing).toBe(false);
  });

  it('leaves an unclosed capture open, releasing held text as body', () => {
    const capture = createFileCapture();
    expect(capture.feed('<file>half a chapter</fi')).toEqual([
      { kind: 'file_open' },
      { kind: 'file_delta', text: 'half a chapter' },
    ]);
    expect(capture.finish()).toEqual([{ kind: 'file_delta', text: '</fi' }]);
    expect(capture.capturing).toBe(true);
  });

  it('ignores empty deltas', () => {
    const capture = createFileCapture();
    expect(capture.feed('')).toEqual([]);
    expect(capture.feed('<')).toEqual([]);
    expect(capture.feed('')).toEqual([]);
    expect(capture.finish()).toEqual([{ kind: 'text', text: '<' }]);
  });
});

describe('normaliseFileBody', () => {
  it.each([
    ['\nbody\n', 'body'],
    ['\r\nbody\r\n', 'body'],
    ['\n\nbody\n\n', '\nbody\n'],
    ['body', 'body'],
    ['\nbody', 'body'],
    ['body\n', 'body'],
    ['\n', ''],
    ['', ''],
    ['\n  indented\n\nlast\n', '  indented\n\nlast'],
  ])('%j → %j', (body, expected) => {
    expect(normaliseFileBody(body)).toBe(expected);
  });
});
