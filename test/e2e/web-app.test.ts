import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getJson } from '../support/api.ts';
import { hasChromium, launchChromium, openProject } from '../support/browser.ts';
import { readStream, startRun } from '../support/sse-client.ts';
import { type Stack, startStack } from '../support/stack.ts';
import { buildWebApp } from '../support/web-build.ts';

// The author's web app (apps/web) as the gateway serves it at `/`, driven in headless Chromium
// against a whole stack with the fake LLM. QUILL_SCREENSHOTS=1 refreshes docs/screenshots.
const SCREENSHOTS = process.env.QUILL_SCREENSHOTS === '1';
const SCREENSHOT_DIR = join(import.meta.dirname, '../../docs/screenshots');
const CHAPTER = '第一章 雨夜';
const BODY = Array.from(
  { length: 12 },
  (_, line) => `雨一直下，林晚推开书店的门，第${line + 1}次听见铜铃。`,
).join('\n');
// Numbered words: a lost or repeated one shows in an exact comparison.
const WORDS = Array.from({ length: 90 }, (_, index) => `词${String(index).padStart(3, '0')}`).join(' ');

let stack: Stack;
let webDist: string;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  // Built before the gateway starts, into a folder of this test's own (GATEWAY_WEB_DIST).
  webDist = await mkdtemp(join(tmpdir(), 'quill-web-'));
  await buildWebApp(webDist);
  stack = await startStack({ env: { GATEWAY_RATE_LIMIT_PER_MINUTE: '1000', GATEWAY_WEB_DIST: webDist } });
  expect(hasChromium, 'headless Chromium is needed: apt-get install -y chromium').toBe(true);
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1366, height: 860 }, locale: 'zh-CN' });
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
  if (webDist) await rm(webDist, { recursive: true, force: true });
});

const gateway = () => stack.gateways[0]!;
const shoot = async (name: string) => {
  if (!SCREENSHOTS) return;
  await mkdir(SCREENSHOT_DIR, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOT_DIR, name) });
};
/** Types a message and presses Ctrl+Enter (the composer waits to be editable again first). */
const submit = async (message: string) => {
  await page.getByTestId('composer').fill(message);
  await page.getByTestId('composer').press('Control+Enter');
};
/** Sends a message the gateway accepts: from then on the last turn is its run's. */
const send = async (message: string) => {
  await submit(message);
  await page.locator('.turn').last().getByTestId('user-message').filter({ hasText: message }).waitFor();
};
const lastTurnText = () =>
  page
    .locator('.turn')
    .last()
    .getByTestId('assistant-text')
    .allTextContents()
    .then((parts) => parts.join(''));

describe('the web app', () => {
  it('signs in with an API key and opens the project', async () => {
    await page.goto(gateway());
    await shoot('sign-in.png');
    await page.getByTestId('api-key').fill('qk_wrong_key_for_the_test');
    await page.getByRole('button', { name: '登录' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('密钥');
    await page.getByTestId('api-key').fill(stack.apiKey);
    await page.getByRole('button', { name: '登录' }).click();
    await openProject(page, stack.projectId);
  });

  it('streams the chapter into the editor while a tool card starts and resolves', async () => {
    stack.fakeLlm.addScript({
      match: { role: 'writer' },
      responses: [
        {
          text: '好的，我先建文件。',
          reasoning: '先想想雨夜的气氛。',
          tool_calls: [{ name: 'create_file', arguments: { title: CHAPTER, file_type: 'draft' } }],
        },
        { text: `<file>\n${BODY}\n</file>\n第一章写好了。`, pause: 'body', pause_at_chars: 60 },
      ],
    });
    await send(`写《${CHAPTER}》`);
    await page.locator('[data-testid="tool-card"][data-status="ok"]').waitFor();
    await stack.fakeLlm.gateReached('body');
    // Mid-body: the editor shows what has streamed so far, read-only.
    const editor = page.getByTestId('editor-text');
    await expect.poll(() => editor.inputValue()).toContain('雨一直下');
    expect(BODY.startsWith((await editor.inputValue()).trimStart().slice(0, 20))).toBe(true);
    expect(await editor.getAttribute('readonly')).not.toBeNull();
    await shoot('workspace-streaming.png');
    stack.fakeLlm.releaseGate('body');
    await page.getByTestId('run-complete').waitFor();
    await expect.poll(() => editor.inputValue().then((value) => value.trim())).toBe(BODY);
    // Thinking is there but folded; the next steps come as buttons.
    const thinking = page.locator('details.thinking').first();
    expect(await thinking.textContent()).toContain('先想想雨夜的气氛。');
    expect(await thinking.getAttribute('open')).toBeNull();
    await page.locator('.suggestions button').first().waitFor();
    expect(await page.locator('.suggestions button').allTextContents()).toContain('继续写第二章');
    expect(await editor.getAttribute('readonly')).toBeNull();
    await expect
      .poll(() => page.getByTestId('file-entry').allTextContents())
      .toContainEqual(expect.stringContaining(CHAPTER));
  });

  it('stops a streaming run with the Stop button', async () => {
    stack.fakeLlm.addScript({
      match: { role: 'writer' },
      responses: [{ text: '雨'.repeat(600), tokens_per_second: 20 }],
    });
    await send('写一段很长的雨声');
    await expect.poll(lastTurnText).toContain('雨');
    await page.getByTestId('stop').click();
    await page.locator('.turn').last().getByTestId('run-stopped').waitFor();
    expect(await page.locator('.turn').last().getByTestId('run-stopped').textContent()).toContain(
      'user_stopped',
    );
    await page.getByTestId('composer').waitFor();
  });

  it('steers a running agent with the Steer button', async () => {
    stack.fakeLlm.addScript({
      match: { role: 'writer' },
      responses: [
        {
          text: '先建一个文件。',
          tool_calls: [{ name: 'create_file', arguments: { title: '第二章', file_type: 'draft' } }],
          pause: 'steer',
        },
        { text: '<file>\n第二章的正文。\n</file>\n好了。' },
      ],
    });
    await send('写《第二章》');
    await stack.fakeLlm.gateReached('steer');
    await page.getByRole('textbox', { name: '插话' }).fill('结尾留个悬念');
    await page.getByRole('button', { name: '插话' }).click();
    await page.getByText('已告诉助手').waitFor();
    stack.fakeLlm.releaseGate('steer');
    await page.locator('.turn').last().getByTestId('run-complete').waitFor();
    expect(await page.locator('.turn').last().textContent()).toContain('助手已收到你的补充：结尾留个悬念');
  });

  it('resumes after a reload mid-run with no lost or repeated word', async () => {
    stack.fakeLlm.addScript({
      match: { role: 'writer' },
      responses: [{ text: WORDS, tokens_per_second: 60, pause: 'reload', pause_at_chars: 200 }],
    });
    await send('数一数');
    await stack.fakeLlm.gateReached('reload');
    await expect.poll(lastTurnText).toContain('词010');
    const resumes: Array<string | undefined> = [];
    page.on('request', (request) => {
      if (/\/agent\/runs\/[^/]+\/stream$/.test(new URL(request.url()).pathname))
        resumes.push(request.headers()['last-event-id']);
    });
    await page.reload();
    await page.locator('.resumed').waitFor();
    // The reloaded page asks for what comes after the newest frame it had kept, not from the start.
    expect(resumes.length).toBeGreaterThan(0);
    expect(Number(resumes[0])).toBeGreaterThan(0);
    expect(WORDS.startsWith(await lastTurnText())).toBe(true);
    stack.fakeLlm.releaseGate('reload');
    await page.locator('.turn').last().getByTestId('run-complete').waitFor();
    expect(await lastTurnText()).toBe(WORDS);
  });

  it('shows the conflict view when someone saved first, and keeps the author’s choice', async () => {
    await page.getByTestId('file-entry').filter({ hasText: CHAPTER }).click();
    const editor = page.getByTestId('editor-text');
    await expect.poll(() => editor.inputValue().then((value) => value.trim())).toBe(BODY);
    await editor.fill(`${BODY}\n作者在浏览器里加的一句。`);
    // Another editor (here: the API) saves the same file first.
    const files = await getJson(gateway(), `/projects/${stack.projectId}/files`, stack.apiKey);
    const chapter = (files.body.files as Array<{ id: string; title: string; version: number }>).find(
      (file) => file.title === CHAPTER,
    )!;
    const theirs = await fetch(`${gateway()}/api/v1/projects/${stack.projectId}/files/${chapter.id}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ content: '合作者的版本。', expected_version: chapter.version }),
    });
    expect(theirs.status).toBe(200);
    await page.getByTestId('save').click();
    await page.getByTestId('conflict').waitFor();
    expect(await page.getByTestId('conflict-theirs').textContent()).toBe('合作者的版本。');
    expect(await page.getByTestId('conflict-mine').textContent()).toContain('作者在浏览器里加的一句。');
    await page.getByText('查看差异').click();
    expect(await page.getByTestId('conflict-diff').textContent()).toContain('+ 作者在浏览器里加的一句。');
    await shoot('conflict.png');
    await page.getByRole('button', { name: '保留我的' }).click();
    await expect.poll(() => page.getByTestId('editor-status').textContent()).toBe('已保存');
    const saved = await getJson(gateway(), `/projects/${stack.projectId}/files/${chapter.id}`, stack.apiKey);
    expect(saved.body.file).toMatchObject({ version: chapter.version + 2 });
    expect(saved.body.file.content).toContain('作者在浏览器里加的一句。');
    // The history compares the collaborator's version with the text now.
    await page.getByText(/历史版本/).click();
    await page
      .getByTestId('version-row')
      .filter({ hasText: `版本 ${chapter.version + 1}` })
      .getByRole('button', { name: '与当前对比' })
      .click();
    const diff = await page.getByTestId('version-diff').textContent();
    expect(diff).toContain('− 合作者的版本。');
    expect(diff).toContain('+ 作者在浏览器里加的一句。');
  });

  it('keeps what the author types while a reload of the open file is on its way', async () => {
    // A run's start and end make the open editor read its file again; the author types before
    // that read answers, and the answer must not put the old text back.
    const files = await getJson(gateway(), `/projects/${stack.projectId}/files`, stack.apiKey);
    const chapter = (files.body.files as Array<{ id: string; title: string }>).find(
      (file) => file.title === CHAPTER,
    )!;
    const fileUrl = `**/api/v1/projects/${stack.projectId}/files/${chapter.id}`;
    let reloadAsked!: () => void;
    const asked = new Promise<void>((resolve) => {
      reloadAsked = resolve;
    });
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    await page.route(fileUrl, async (route) => {
      if (route.request().method() === 'GET') {
        reloadAsked();
        await released;
      }
      await route.continue();
    });
    stack.fakeLlm.addScript({ match: { role: 'writer' }, responses: [{ text: '好的，一句话。' }] });
    await send('说一句话');
    await page.locator('.turn').last().getByTestId('run-complete').waitFor();
    await asked;
    const editor = page.getByTestId('editor-text');
    const typed = `${await editor.inputValue()}\n等重新读取时打的字。`;
    await editor.fill(typed);
    const answered = page.waitForResponse(
      (response) => response.request().method() === 'GET' && response.url().endsWith(chapter.id),
    );
    release();
    await (await answered).finished();
    // Two frames in the page (an expression: this file is typed for Node, not the DOM): the
    // answer's handler has run by then.
    await page.evaluate(
      'new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))',
    );
    await page.unroute(fileUrl);
    expect(await editor.inputValue()).toBe(typed);
    await page.getByTestId('save').click();
    await expect.poll(() => page.getByTestId('editor-status').textContent()).toBe('已保存');
    const saved = await getJson(gateway(), `/projects/${stack.projectId}/files/${chapter.id}`, stack.apiKey);
    expect(saved.body.file.content).toBe(typed);
  });

  it('marks an AI draft written over the author’s save, and accepts it', async () => {
    const title = '第三章';
    const draftBody = '第三章：AI 写的正文。';
    stack.fakeLlm.addScript({
      match: { role: 'writer' },
      responses: [
        { text: '建文件。', tool_calls: [{ name: 'create_file', arguments: { title, file_type: 'draft' } }] },
        { text: `<file>\n${draftBody}\n</file>\n写完了。`, pause: 'draft', pause_at_chars: 10 },
      ],
    });
    await send(`写《${title}》`);
    await stack.fakeLlm.gateReached('draft');
    // The author saves the file first (another tab): the AI body must go to a draft next to it.
    const files = await getJson(gateway(), `/projects/${stack.projectId}/files`, stack.apiKey);
    const target = (files.body.files as Array<{ id: string; title: string; version: number }>).find(
      (file) => file.title === title,
    )!;
    const authorSave = await fetch(`${gateway()}/api/v1/projects/${stack.projectId}/files/${target.id}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ content: '作者先写的第三章。', expected_version: target.version }),
    });
    expect(authorSave.status).toBe(200);
    stack.fakeLlm.releaseGate('draft');
    await page.locator('.turn').last().getByTestId('run-complete').waitFor();
    const draftEntry = page.getByTestId('file-entry').filter({ hasText: 'AI 草稿' });
    await draftEntry.first().waitFor();
    await draftEntry.first().click();
    await page.getByTestId('draft-banner').waitFor();
    await page.getByRole('button', { name: '采用草稿' }).click();
    await expect.poll(() => page.getByTestId('file-entry').filter({ hasText: 'AI 草稿' }).count()).toBe(0);
    const accepted = await getJson(
      gateway(),
      `/projects/${stack.projectId}/files/${target.id}`,
      stack.apiKey,
    );
    expect(accepted.body.file.content.trim()).toBe(draftBody);
    await expect.poll(() => page.locator('.editor-head h2').textContent()).toBe(title);
  });

  it('explains a busy session in words when another tab is running in it', async () => {
    const sessionId = await page.evaluate(
      (projectId) => sessionStorage.getItem(`quill.current-session.${projectId}`),
      stack.projectId,
    );
    expect(sessionId).toBeTruthy();
    stack.fakeLlm.addScript({
      match: { role: 'writer' },
      responses: [{ text: '另一个标签页。', pause: 'busy' }],
    });
    const other = await startRun(gateway(), stack.apiKey, {
      project_id: stack.projectId,
      session_id: sessionId!,
      message: '另一个标签页的请求',
    });
    expect(other.status).toBe(200);
    await stack.fakeLlm.gateReached('busy');
    const turns = await page.locator('.turn').count();
    await submit('同时再发一条');
    await expect.poll(() => page.getByTestId('chat-error').textContent()).toContain('这个会话还在生成回复');
    // The refused message is not left as a turn, and it is back in the composer to send later.
    expect(await page.locator('.turn').count()).toBe(turns);
    expect(await page.getByTestId('composer').inputValue()).toBe('同时再发一条');
    await page.getByTestId('composer').fill('');
    stack.fakeLlm.releaseGate('busy');
    await readStream(other);
  });

  it('creates a file of the author’s own from the file tree and opens it', async () => {
    await page.getByRole('textbox', { name: '新建文件' }).fill('人物小传');
    await page.getByRole('textbox', { name: '新建文件' }).press('Enter');
    await page.getByTestId('file-entry').filter({ hasText: '人物小传' }).waitFor();
    await expect.poll(() => page.locator('.editor-head h2').textContent()).toBe('人物小传');
  });

  it('switches the UI to English and back', async () => {
    await page.getByRole('combobox', { name: '语言' }).selectOption('en');
    await page.getByRole('button', { name: 'Send' }).waitFor();
    await page.getByRole('combobox', { name: 'Language' }).selectOption('zh');
    await page.getByRole('button', { name: '发送' }).waitFor();
  });

  it('keeps the editor and the chat on screen at tablet width', async () => {
    await page.setViewportSize({ width: 820, height: 1180 });
    for (const testId of ['editor-text', 'composer']) {
      const box = await page.getByTestId(testId).boundingBox();
      expect(box, testId).not.toBeNull();
      expect(box!.x + box!.width, testId).toBeLessThanOrEqual(820);
      expect(box!.y + box!.height, testId).toBeLessThanOrEqual(1180);
    }
  });
});
