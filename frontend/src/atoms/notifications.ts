import { atom } from 'jotai';
import { fetchNotifications, type NotificationList } from '../api/notifications';

/** The bell's list in the current workspace: undefined until read, null when the read failed. */
export const notificationsAtom = atom<NotificationList | null | undefined>(undefined);

let reading = 0;
/** Reads the list again (a notification event for this person, the bell opened, a workspace switch). */
export const refreshNotificationsAtom = atom(null, async (_get, set) => {
  const mine = ++reading;
  try {
    const list = await fetchNotifications();
    // a read begun earlier never replaces a newer one
    if (mine === reading) set(notificationsAtom, list);
  } catch {
    if (mine === reading) set(notificationsAtom, null);
  }
});
