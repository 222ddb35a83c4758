import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { type AddressInfo, connect, createServer as createTcpServer, type Socket } from 'node:net';
import { type Browser, chromium, type Page } from 'playwright-core';
import { build } from 'vite';

/** Debian's chromium (DEVELOPERS.md): a tool's own browser download is not available here. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const hasChromium = existsSync(CHROMIUM_PATH);

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/**
 * Serves one HTML page, plus scripts by path, on a port of its own: an origin other than the
 * gateway's.
 */
export async function servePage(
  html: string,
  scripts: Record<string, () => Promise<string>> = {},
): Promise<{ origin: string; close(): Promise<void> }> {
  const server: Server = createServer((request, response) => {
    const script = scripts[request.url ?? ''];
    if (!script) {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      response.end(html);
      return;
    }
    void script().then((code) => {
      response.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' });
      response.end(code);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://localhost:${port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** `@quill/client` as one ES module a page can import (built with the repo's vite). */
export async function bundleClient(): Promise<string> {
  const output = await build({
    configFile: false,
    logLevel: 'silent',
    build: {
      write: false,
      minify: false,
      lib: { entry: new URL('../../libs/client/src/index.ts', import.meta.url).pathname, formats: ['es'] },
    },
  });
  const results = Array.isArray(output) ? output : [output];
  const chunk = results
    .flatMap((result) => ('output' in result ? result.output : []))
    .find((item) => item.type === 'chunk');
  if (chunk?.type !== 'chunk') throw new Error('the client bundle has no chunk');
  return chunk.code;
}

/**
 * A TCP proxy to `target` that cuts its first connection once `cutAfterBytes` of response went
 * through, as a dropped network would; later connections pass untouched.
 */
export async function startCuttingProxy(
  target: string,
  cutAfterBytes: number,
): Promise<{ url: string; connections(): number; close(): Promise<void> }> {
  const { hostname, port } = new URL(target);
  const sockets = new Set<Socket>();
  let connections = 0;
  const server = createTcpServer((client) => {
    const cut = ++connections === 1;
    const upstream = connect(Number(port), hostname);
    sockets.add(client).add(upstream);
    let relayed = 0;
    client.pipe(upstream);
    upstream.on('data', (chunk: Buffer) => {
      relayed += chunk.length;
      if (cut && relayed > cutAfterBytes) {
        client.write(chunk.subarray(0, chunk.length - (relayed - cutAfterBytes)));
        client.destroy();
        upstream.destroy();
        return;
      }
      client.write(chunk);
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    connections: () => connections,
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/**
 * After signing in to the web app: opens the project, from the project list or, where the
 * picker asks for an id, by its id; settles once the composer is there.
 */
export async function openProject(page: Page, projectId: string): Promise<void> {
  const byId = page.getByTestId('project-id');
  const listed = page.locator('.project-list button').first();
  await byId.or(listed).waitFor();
  if (await byId.isVisible()) {
    await byId.fill(projectId);
    await page.getByRole('button', { name: '打开' }).click();
  } else await listed.click();
  await page.getByTestId('composer').waitFor();
}
