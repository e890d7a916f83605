/**
 * Notifications (issue 42): what a person is told about, in the bell and by e-mail. Pure types and texts, shared by
 * the API and the front end.
 */

export const NOTIFICATION_KINDS = ['mention', 'approval_needed', 'decision', 'comment', 'reply'] as const;
export type NotificationKind = (typeof NOTIFICATION_KINDS)[number];

export const NOTIFICATION_EMAIL_CHOICES = ['each', 'digest', 'none'] as const;
export type NotificationEmailChoice = (typeof NOTIFICATION_EMAIL_CHOICES)[number];

/** The bell lists this many, newest first. */
export const NOTIFICATIONS_LISTED = 50;

export interface NotificationView {
  id: string;
  kind: NotificationKind;
  /** what happened, in a sentence ("Mia Member mentioned you on terrace.png") */
  text: string;
  /** the item it is about: an approval id while pending, else the saved item's id */
  item: { kind: string; id: string } | null;
  project_id: string | null;
  by: { user_id: string; name: string } | null;
  created_at: string;
  read: boolean;
}

export const NOTIFICATION_TEXT = {
  mention: (who: string, item: string) => `${who} mentioned you on ${item}`,
  reply: (who: string, item: string) => `${who} replied to your comment on ${item}`,
  comment: (who: string, item: string) => `${who} commented on ${item}, which you started`,
  approvalNeeded: (item: string) => `Your approval is needed: ${item}`,
  approved: (who: string, item: string) => `${who} approved ${item}, which you started`,
  rejected: (who: string, item: string) => `${who} rejected ${item}, which you started`,
  guestComment: (who: string, item: string) => `${who} commented on ${item}`,
  guestAskedStudio: (who: string, item: string, why: string) => `${who} asked for changes on ${item}. It was not rejected: ${why} Decide on it in Approvals.`,
} as const;

export const NOTIFICATION_EMAIL_LABELS: Record<NotificationEmailChoice, string> = {
  each: 'An e-mail for each notification',
  digest: 'One e-mail a day with what happened',
  none: 'No e-mail',
};
