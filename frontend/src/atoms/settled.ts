import { atom, type Atom } from 'jotai';
import { unwrap } from 'jotai/utils';
import { sessionKeyAtom } from './session';

export type Settled<T> = { ok: true; data: T } | { ok: false; error: unknown };

type KeyedSettled<T> = Settled<T> & { sessionKey: string | null };

/**
 * The read side of a user-scoped async resource atom for components: undefined until the first answer, then
 * the latest settled answer. A refresh keeps the previous answer on screen until the new one arrives (no
 * loading flash), but never an answer that belongs to another session.
 */
export function settledAtom<T>(source: Atom<Promise<T>>): Atom<Settled<T> | undefined> {
  const settled = atom(async (get): Promise<KeyedSettled<T>> => {
    const sessionKey = get(sessionKeyAtom);
    try {
      return { ok: true, data: await get(source), sessionKey };
    } catch (error) {
      return { ok: false, error, sessionKey };
    }
  });
  const latest = unwrap(settled, (previous) => previous);
  return atom((get) => {
    const answer = get(latest);
    return answer && answer.sessionKey === get(sessionKeyAtom) ? answer : undefined;
  });
}
