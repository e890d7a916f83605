import { atom } from 'jotai';

/**
 * The last comment event of the workspace's stream (a thread opened, a reply, an edit, a deletion, a thread resolved
 * or reopened), with a counter so the same item twice is still a change: an open comment panel of that item
 * re-reads its threads.
 */
export const commentChangeAtom = atom<{ n: number; itemId: string | null }>({ n: 0, itemId: null });

export const commentsChangedAtom = atom(null, (_get, set, event: { itemId: string }) => {
  set(commentChangeAtom, (current) => ({ n: current.n + 1, itemId: event.itemId }));
});
