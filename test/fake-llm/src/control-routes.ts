import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Gates } from './gates.ts';
import { parseJson, readBody, sendJson } from './http-io.ts';
import type { RequestLog } from './request-log.ts';
import { Script } from './script-schema.ts';
import type { ScriptStore } from './script-store.ts';

/**
 * The test-only endpoints under `/__`: scripting and request inspection. Unauthenticated, since
 * only tests and the demo ever talk to this server.
 * Returns false when the path is not a control route.
 */
export async function handleControlRoute(
  request: IncomingMessage,
  response: ServerResponse,
  url: URL,
  state: { scripts: ScriptStore; requestLog: RequestLog; gates: Gates },
): Promise<boolean> {
  // Gates (see gates.ts): GET waits until a stream is held there, POST …/release lets it go.
  const gate = /^\/__gates\/([\w-]+)(\/release)?$/.exec(url.pathname);
  if (gate) {
    if (request.method === 'POST' && gate[2]) {
      state.gates.release(gate[1]!);
      sendJson(response, 200, { ok: true });
      return true;
    }
    if (request.method === 'GET' && !gate[2]) {
      await state.gates.reached(gate[1]!);
      sendJson(response, 200, { reached: true });
      return true;
    }
  }
  const route = `${request.method} ${url.pathname}`;
  switch (route) {
    case 'GET /__health':
      sendJson(response, 200, { ok: true });
      return true;
    case 'POST /__scripts': {
      const parsed = Script.safeParse(parseJson(await readBody(request)));
      if (!parsed.success) {
        sendJson(response, 400, { error: { message: 'invalid script', issues: parsed.error.issues } });
        return true;
      }
      state.scripts.add(parsed.data);
      sendJson(response, 201, { ok: true });
      return true;
    }
    case 'DELETE /__scripts':
      state.scripts.clear();
      sendJson(response, 200, { ok: true });
      return true;
    case 'GET /__requests': {
      const filter = {
        run_id: url.searchParams.get('run_id') ?? undefined,
        role: url.searchParams.get('role') ?? undefined,
      };
      sendJson(response, 200, { requests: state.requestLog.list(filter) });
      return true;
    }
    case 'DELETE /__requests':
      state.requestLog.clear();
      sendJson(response, 200, { ok: true });
      return true;
    default:
      return false;
  }
}
