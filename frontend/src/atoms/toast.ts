import { atom } from 'jotai';

export type ToastKind = 'success' | 'error' | 'info';

export interface Toast {
  id: number;
  kind: ToastKind;
  message: string;
}

const TOAST_DURATION_MS = 4000;
let nextToastId = 1;

export const toastsAtom = atom<Toast[]>([]);

export const dismissToastAtom = atom(null, (_get, set, id: number) => {
  set(toastsAtom, (toasts) => toasts.filter((t) => t.id !== id));
});

export const showToastAtom = atom(null, (_get, set, toast: Omit<Toast, 'id'>) => {
  const id = nextToastId++;
  set(toastsAtom, (toasts) => [...toasts.slice(-3), { ...toast, id }]);
  setTimeout(() => set(dismissToastAtom, id), TOAST_DURATION_MS);
});
