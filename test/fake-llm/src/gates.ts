/**
 * Named pause points a scripted stream can stop at (`pause` + `pause_at_chars`), so a test can
 * act at an exact point of a reply (the author saves mid-chapter, a worker is killed mid-body)
 * without guessing at timing: wait until a stream is held at the gate, act, then release it.
 */
export interface Gates {
  /** Resolves once a stream is held at this gate (at once if one already is or was). */
  reached(name: string): Promise<void>;
  /** Lets the held stream (and any later one at this gate) go on. */
  release(name: string): void;
  /** Called by a stream: holds it until the gate is released or the request is aborted. */
  hold(name: string, signal: AbortSignal): Promise<void>;
}

interface Gate {
  reached: Promise<void>;
  markReached: () => void;
  released: Promise<void>;
  markReleased: () => void;
}

export function createGates(): Gates {
  const gates = new Map<string, Gate>();
  const gate = (name: string): Gate => {
    let existing = gates.get(name);
    if (!existing) {
      const reached = Promise.withResolvers<void>();
      const released = Promise.withResolvers<void>();
      existing = {
        reached: reached.promise,
        markReached: reached.resolve,
        released: released.promise,
        markReleased: released.resolve,
      };
      gates.set(name, existing);
    }
    return existing;
  };
  return {
    reached: (name) => gate(name).reached,
    release: (name) => gate(name).markReleased(),
    async hold(name, signal) {
      const held = gate(name);
      held.markReached();
      await new Promise<void>((resolve, reject) => {
        const onAbort = () => reject(signal.reason);
        if (signal.aborted) return onAbort();
        signal.addEventListener('abort', onAbort, { once: true });
        void held.released.then(() => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        });
      });
    },
  };
}
