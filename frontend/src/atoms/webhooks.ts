import { atom } from 'jotai';

/**
 * The last webhook event of the workspace's stream (a delivery attempt recorded, an endpoint disabled by delivery),
 * with a counter so the same endpoint twice is still a change: the Webhooks page reads its endpoint list or that
 * endpoint's delivery log again.
 */
export const webhookChangeAtom = atom<{ n: number; endpointId: string | null; change: 'deliveries' | 'disabled' | null }>({ n: 0, endpointId: null, change: null });

export const webhookChangedAtom = atom(null, (_get, set, event: { endpointId: string; change: 'deliveries' | 'disabled' }) => {
  set(webhookChangeAtom, (current) => ({ n: current.n + 1, endpointId: event.endpointId, change: event.change }));
});
