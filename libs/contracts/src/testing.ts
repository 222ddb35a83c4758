import { encodeSseFrame, type SseFrame } from './frames.ts';

/** Parses an SSE body (as a client would) into frames with their ids; comments are skipped. */
export function parseSseText(text: string): Array<{ id: string | undefined; frame: SseFrame }> {
  const out: Array<{ id: string | undefined; frame: SseFrame }> = [];
  for (const block of text.split('\n\n')) {
    let id: string | undefined;
    let data = '';
    for (const line of block.split('\n')) {
      if (line.startsWith('id: ')) id = line.slice(4);
      else if (line.startsWith('data: ')) data += line.slice(6);
    }
    if (data) out.push({ id, frame: JSON.parse(data) as SseFrame });
  }
  return out;
}

export { encodeSseFrame };
