/**
 * Search terms from the author's message for retrieval. Chinese has no spaces, so CJK runs are
 * cut into overlapping bigrams (most Chinese words are two characters); other scripts give
 * their words of three letters or more.
 */
const CJK_RUN = /[\u3400-\u9fff\uf900-\ufaff]+/g;
const WORD = /[\p{L}\p{N}]{3,}/gu;
// Bigrams made only of function characters match nearly every file and rank nothing.
const FUNCTION_CHARACTERS = new Set(
  '的了是在和与我你他她它们这那个一不也就都而及把被让给写请帮再继续一下章节',
);
const MAX_TERMS = 24;

export function queryTerms(message: string): string[] {
  const terms = new Set<string>();
  for (const run of message.match(CJK_RUN) ?? []) {
    const characters = [...run];
    if (characters.length === 1) continue;
    for (let index = 0; index + 1 < characters.length; index++) {
      const pair = characters[index]! + characters[index + 1]!;
      if (FUNCTION_CHARACTERS.has(characters[index]!) && FUNCTION_CHARACTERS.has(characters[index + 1]!))
        continue;
      terms.add(pair);
    }
  }
  for (const word of message.replace(CJK_RUN, ' ').match(WORD) ?? []) terms.add(word.toLowerCase());
  return [...terms].slice(0, MAX_TERMS);
}

/** Names a character or setting file goes by: its title, without decorations like 「人物：」 or （主角）. */
export function nameVariants(title: string): string[] {
  const names = new Set<string>([title.trim()]);
  const stripped = title
    .replace(/^[^：:]{1,6}[：:]/, '')
    .replace(/[（(][^）)]*[）)]/g, '')
    .replace(/\.[a-z]+$/i, '')
    .trim();
  if (stripped) names.add(stripped);
  return [...names].filter((name) => [...name].length >= 2);
}

export function mentions(text: string, title: string): boolean {
  return nameVariants(title).some((name) => text.includes(name));
}
