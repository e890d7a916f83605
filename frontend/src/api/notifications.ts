import type { NotificationEmailChoice, NotificationView } from '../../../domain/notifications';
import { api } from './client';

export type { NotificationEmailChoice, NotificationView };

export interface NotificationList {
  notifications: NotificationView[];
  unread: number;
}

/** GET /api/notifications: the newest notifications in the current workspace and the unread count. */
export async function fetchNotifications(): Promise<NotificationList> {
  const body = await api.get('notifications').json<{ success: true } & NotificationList>();
  return { notifications: body.notifications, unread: body.unread };
}

/** Marks the current workspace's notifications read (all of them when `ids` is absent). */
export async function markNotificationsRead(ids?: string[]): Promise<void> {
  await api.post('notifications/read', { json: ids ? { ids } : {} });
}

export async function fetchNotificationEmail(): Promise<NotificationEmailChoice> {
  return (await api.get('profile/notifications').json<{ email: NotificationEmailChoice }>()).email;
}

export async function setNotificationEmail(email: NotificationEmailChoice): Promise<NotificationEmailChoice> {
  return (await api.put('profile/notifications', { json: { email } }).json<{ email: NotificationEmailChoice }>()).email;
}
