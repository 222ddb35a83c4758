import { RequestOne } from '@nats-io/nats-core/internal';

/**
 * nats.js (3.4.0, the newest release) ends every request it answered by cancelling it, and its
 * `cancel` rejects the request's already-settled promise with a `new RequestError("cancelled")`:
 * an Error built, stack trace captured, and thrown away, for every successful request. Every
 * JetStream publish, API call (direct get, consumer create) and `requestReply` is one such
 * request: 5–7 µs of client CPU each, measured (docs/decisions/0062-nats-request-settle-fix.md).
 *
 * This makes the cancel that follows a settled request do what it does apart from the Error:
 * stop the timer and leave the mux. A cancel of a request that is still waiting (a closed or
 * disconnected connection, a caller's cancel) is the library's own, unchanged.
 *
 * The replaced methods are checked against the library's text first: a nats.js whose
 * `resolver` or `cancel` differ from the ones read here is left alone, and the test that pins
 * this (`libs/bus/test/request-settle-fix.test.ts`) fails, so an upgrade is read again before
 * the fix follows it (or goes, once the library stops building that Error).
 */
const EXPECTED_CANCEL = [
  'if (this.timer) {',
  'this.timer.cancel();',
  '}',
  'this.mux.cancel(this);',
  'this.deferred.reject(err ? err : new errors_1.RequestError("cancelled"));',
];
const EXPECTED_RESOLVER_END = ['this.deferred.resolve(msg);', '}', 'this.cancel();'];

interface RequestInternals {
  timer?: { cancel(): void };
  mux: { cancel(request: unknown): void };
  /** Set by the patched resolver: the deferred is settled, a later cancel has nothing to reject. */
  quillSettled?: boolean;
}

type Resolver = (this: RequestInternals, error: unknown, message: unknown) => void;
type Cancel = (this: RequestInternals, error?: unknown) => void;
interface Methods {
  resolver: Resolver;
  cancel: Cancel;
}

/**
 * Where the library's own methods are kept once replaced: on the prototype itself, since a
 * test runner may evaluate this module again in a process whose nats.js is already fixed.
 */
const ORIGINALS = Symbol.for('quill.bus.requestSettleFix');
const prototype = RequestOne.prototype as unknown as Partial<Methods> & { [ORIGINALS]?: Methods };

function statements(method: (...args: never[]) => unknown): string[] {
  const text = method.toString();
  const body = text.slice(text.indexOf('{') + 1, text.lastIndexOf('}'));
  return body
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('//'));
}

/** Whether this nats.js has (or had, before the fix) the request methods the fix was written against. */
export function requestMethodsMatch(): boolean {
  const { resolver, cancel } = prototype[ORIGINALS] ?? prototype;
  if (typeof resolver !== 'function' || typeof cancel !== 'function') return false;
  const resolverEnd = statements(resolver).slice(-EXPECTED_RESOLVER_END.length);
  return (
    statements(cancel).join('\n') === EXPECTED_CANCEL.join('\n') &&
    resolverEnd.join('\n') === EXPECTED_RESOLVER_END.join('\n')
  );
}

/** Installs the fix once per process; returns whether it is in place. */
export function installRequestSettleFix(): boolean {
  if (prototype[ORIGINALS]) return true;
  if (!requestMethodsMatch()) return false;
  const resolver = prototype.resolver!;
  const cancel = prototype.cancel!;
  prototype[ORIGINALS] = { resolver, cancel };
  prototype.resolver = function settle(this: RequestInternals, error: unknown, message: unknown) {
    // The library's resolver settles the deferred, then calls cancel() with no error.
    this.quillSettled = true;
    resolver.call(this, error, message);
  };
  prototype.cancel = function cancelRequest(this: RequestInternals, error?: unknown) {
    if (error !== undefined || !this.quillSettled) {
      cancel.call(this, error);
      return;
    }
    this.timer?.cancel();
    this.mux.cancel(this);
  };
  return true;
}
