/**
 * Hourly, by the Temporal schedule `notification-digest` (runs never overlap): e-mails the daily digests of the
 * people whose oldest unsent notification is a day old (services/review/notificationMail.ts).
 */
import { proxyActivities } from '@temporalio/workflow';
import type { createActivities } from '../activities';

const { sendNotificationDigests } = proxyActivities<ReturnType<typeof createActivities>>({
  startToCloseTimeout: '10 minutes',
  retry: { initialInterval: '30 seconds', maximumInterval: '5 minutes', maximumAttempts: 3 },
});

export async function notificationDigestWorkflow(): Promise<{ sent: number }> {
  return { sent: await sendNotificationDigests() };
}
