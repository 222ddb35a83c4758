// Chapter order is shared with the gateway's manuscript export; it lives in the contracts.
export { chapterNumber, parseChineseNumber, requestedChapter } from '@quill/contracts';
