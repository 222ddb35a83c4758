/**
 * Pieces that decide where o200k's and cl100k's pre-tokenizer cuts, for tests that put texts
 * together from them: newlines before and after whitespace, '/', punctuation, letters (a
 * contraction among them), digits, marks, a surrogate pair, a byte order mark and a special-token
 * lookalike. '\n' twice: paragraph breaks are what the paragraph counter cuts at.
 */
export const PRE_TOKENIZER_PIECES = [
  '\n',
  '\n',
  '\r\n',
  ' ',
  '\t',
  '\u3000',
  '/',
  'a',
  'A',
  "'s",
  '1',
  '12345',
  '。',
  '，',
  '林晚',
  '「',
  '#',
  '- ',
  '😀',
  'e\u0301',
  '\uFEFF',
  '<|endoftext|>',
];
