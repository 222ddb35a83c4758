import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PROJECT_ZIP_LIMITS } from '@quill/contracts';
import { getFile, listFiles } from '@quill/db';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readZipEntries } from '../../services/gateway/src/skills/zip-reader.ts';
import { authorApi } from '../support/background-run.ts';
import { hasChromium, launchChromium, openProject } from '../support/browser.ts';
import { readStream, startRun } from '../support/sse-client.ts';
import { type Stack, startStack } from '../support/stack.ts';
import { buildWebApp } from '../support/web-build.ts';
import { giveProjectHistory, routing, scriptRouter } from './workflow-support.ts';

// The author sees what is not accepted yet (docs/kernel.md "Artifacts and acceptance"): in a
// project that reviews AI text, the web app marks the file, shows the draft labelled as one with
// its diff and the reviewer's findings, sends it back for a revision that streams like any run,
// and accepts it; the export labels unaccepted text. QUILL_SCREENSHOTS=1 refreshes docs/screenshots.
const SCREENSHOTS = process.env.QUILL_SCREENSHOTS === '1';
const SCREENSHOT_DIR = join(import.meta.dirname, '../../docs/screenshots');
const TITLE = '第五章 门铃';
const FIRST = '门铃响了一声。\n林晚抬起头。';
const REVISED = '门铃响了一声，又响了一声。\n林晚抬起头，雨水顺着门缝流进来。';
const FINDING = '审查结论：节奏太快，门铃声只写了一次。';

let stack: Stack;
let webDist: string;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  webDist = await mkdtemp(join(tmpdir(), 'quill-web-'));
  await buildWebApp(webDist);
  stack = await startStack({
    env: {
      GATEWAY_RATE_LIMIT_PER_MINUTE: '1000',
      GATEWAY_WEB_DIST: webDist,
      AGENT_AUTO_REVIEW_THRESHOLD_CHARS: '10',
    },
  });
  expect(hasChromium, 'headless Chromium is needed: apt-get install -y chromium').toBe(true);
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1366, height: 900 }, locale: 'zh-CN' });
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
  if (webDist) await rm(webDist, { recursive: true, force: true });
});

const api = (path: string, init: { method?: string; body?: unknown } = {}) => authorApi(stack, path, init);
const shoot = async (name: string) => {
  if (!SCREENSHOTS) return;
  await mkdir(SCREENSHOT_DIR, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOT_DIR, name), fullPage: true });
};
const download = async (path: string) => {
  const response = await fetch(`${stack.gateways[0]}/api/v1${path}`, {
    headers: { authorization: `Bearer ${stack.apiKey}` },
  });
  expect(response.status).toBe(200);
  return Buffer.from(await response.arrayBuffer());
};
const chapterEntry = () => page.getByTestId('file-entry').filter({ hasText: TITLE });

describe('artifacts in the web app', () => {
  it('the agent writes a chapter into a project that reviews AI text; a reviewer step judges it', async () => {
    const settings = await api(`/projects/${stack.projectId}/settings`, {
      method: 'PUT',
      body: { artifact_acceptance: 'review' },
    });
    expect(settings.status).toBe(200);
    stack.fakeLlm.addScript({
      match: { role: 'writer' },
      responses: [
        { text: '', tool_calls: [{ name: 'create_file', arguments: { title: TITLE, file_type: 'draft' } }] },
        { text: `<file>\n${FIRST}\n</file>\n写好了，请审阅。` },
        { text: '' },
      ],
    });
    stack.fakeLlm.addScript({ match: { role: 'quality_reviewer' }, responses: [{ text: FINDING }] });
    // Quality mode sends a body over AGENT_AUTO_REVIEW_THRESHOLD_CHARS to the reviewer.
    // (Not the project's first message, which has its own fixed flow.)
    await giveProjectHistory(stack);
    scriptRouter(stack, routing('writer', 'quick', { scope: `写《${TITLE}》` }));
    const response = await startRun(stack.gateways[0]!, stack.apiKey, {
      project_id: stack.projectId,
      message: `写《${TITLE}》`,
      generation_mode: 'quality',
    });
    expect(response.status).toBe(200);
    const frames = (await readStream(response)).frames.map((received) => received.frame);
    expect(frames.at(-1)?.type).toBe('done');
    expect(stack.fakeLlm.requests({ role: 'quality_reviewer' }).length).toBeGreaterThan(0);
  });

  it('marks the file as pending, labelled a draft, with its diff and the reviewer findings', async () => {
    await page.goto(stack.gateways[0]!);
    await page.getByTestId('api-key').fill(stack.apiKey);
    await page.getByRole('button', { name: '登录' }).click();
    await openProject(page, stack.projectId);

    await chapterEntry().getByTestId('pending-badge').waitFor();
    await chapterEntry().click();
    const panel = page.getByTestId('artifact-panel');
    await panel.waitFor();
    expect(await page.getByTestId('artifact-label').textContent()).toContain('AI 草稿，审阅中，待作者验收');
    expect(await panel.getAttribute('data-state')).toBe('under_review');
    await expect.poll(() => page.getByTestId('artifact-diff').textContent()).toContain('+ 门铃响了一声。');
    expect(await page.getByTestId('artifact-diff').textContent()).toContain('+ 林晚抬起头。');
    expect(await page.getByTestId('artifact-finding').allTextContents()).toContainEqual(
      expect.stringContaining(FINDING),
    );
    await shoot('artifact-review.png');
  });

  it('the export labels the unaccepted text, and accepted-only leaves it out', async () => {
    const manuscript = (await download(`/projects/${stack.projectId}/manuscript.md`)).toString('utf8');
    expect(manuscript).toContain(`## ${TITLE}\n\n> 【AI 草稿，审阅中，待作者验收】\n\n${FIRST}`);
    const acceptedOnly = (
      await download(`/projects/${stack.projectId}/manuscript.md?accepted_only=true`)
    ).toString('utf8');
    expect(acceptedOnly).not.toContain(TITLE);
    const entries = await readZipEntries(
      await download(`/projects/${stack.projectId}/export`),
      PROJECT_ZIP_LIMITS,
    );
    const chapter = [...entries.entries()].find(([path]) => path.includes(TITLE));
    expect(chapter?.[1].toString('utf8')).toContain('acceptance: under_review');
    const strict = await readZipEntries(
      await download(`/projects/${stack.projectId}/export?accepted_only=true`),
      PROJECT_ZIP_LIMITS,
    );
    expect([...strict.keys()].some((path) => path.includes(TITLE))).toBe(false);
  });

  it('sends it back with a comment: the revision run streams, then the author accepts the new text', async () => {
    stack.fakeLlm.addScript({
      match: { role: 'writer' },
      responses: [
        {
          text: '我按意见改。',
          tool_calls: [{ name: 'create_file', arguments: { title: TITLE, file_type: 'draft' } }],
        },
        { text: `<file>\n${REVISED}\n</file>\n改好了。` },
      ],
    });
    await page.getByTestId('revision-comment').fill('门铃多响几次，写雨水');
    await page.getByTestId('artifact-revise').click();
    // The revision run is a turn of the chat, streamed like any run.
    await expect.poll(() => page.locator('.turn').last().textContent()).toContain('门铃多响几次，写雨水');
    await page.locator('.turn').last().getByTestId('run-complete').waitFor();
    await expect
      .poll(() => page.locator('.turn').last().getByTestId('assistant-text').allTextContents())
      .toContainEqual(expect.stringContaining('我按意见改'));
    const editor = page.getByTestId('editor-text');
    await expect.poll(() => editor.inputValue().then((value) => value.trim())).toBe(REVISED);
    // Still not accepted: the new text is a draft too, against the accepted text (none yet).
    // (A reviewer step of the revision run may judge it too: drafted or under_review, both open.)
    await expect
      .poll(() => page.getByTestId('artifact-panel').getAttribute('data-state'))
      .toMatch(/^(drafted|under_review)$/);
    expect(await page.getByTestId('artifact-label').textContent()).toContain('AI 草稿');
    await expect
      .poll(() => page.getByTestId('artifact-diff').textContent())
      .toContain('+ 林晚抬起头，雨水顺着门缝流进来。');
    await shoot('artifact-revised.png');

    await page.getByTestId('artifact-accept').click();
    await page.getByTestId('artifact-panel').waitFor({ state: 'detached' });
    await expect.poll(() => chapterEntry().getByTestId('pending-badge').count()).toBe(0);
    const file = (await listFiles(stack.pool, stack.projectId)).find((entry) => entry.title === TITLE)!;
    expect((await getFile(stack.pool, stack.projectId, file.id))?.content).toBe(REVISED);
    // Nothing of this file's text waits any more: the version sent back was superseded by the
    // accepted revision (docs/kernel.md "Artifacts and acceptance").
    const open = (await api(`/projects/${stack.projectId}/artifacts?state=open`)).body.artifacts as Array<{
      text_file_id: string;
      version: number;
      state: string;
    }>;
    expect(open.filter((entry) => entry.text_file_id === file.id && entry.version === file.version)).toEqual(
      [],
    );
    expect(open).toEqual([]);
    const all = (await api(`/projects/${stack.projectId}/artifacts?state=all`)).body.artifacts as Array<{
      state: string;
    }>;
    expect(all.map((entry) => entry.state).sort()).toEqual(['accepted', 'superseded']);
    const manuscript = (
      await download(`/projects/${stack.projectId}/manuscript.md?accepted_only=true`)
    ).toString('utf8');
    expect(manuscript).toContain(`## ${TITLE}\n\n${REVISED}`);
  });
});
