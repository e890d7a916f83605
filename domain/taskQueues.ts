/**
 * Every Temporal task queue of the app. The API starts workflows on these, workers poll them, and workflows
 * may route activities to them, so this module stays pure (no Node APIs) and importable from workflows/.
 */
export const TASK_QUEUES = {
  /** Light database-only workflows: try-it onboarding. */
  onboarding: 'render-studio-onboarding',
  /** Image edit, clip, assembly and draft workflows (orchestration, provider calls). */
  generation: 'render-studio-generation',
  /** CPU-heavy sharp / ffmpeg activities, kept apart so they can be throttled per worker. */
  media: 'render-studio-media',
  /** One approval workflow per pending item, mostly waiting on updates and deadline timers. */
  approvals: 'render-studio-approvals',
  /** Data exports (streaming a user's files into a zip) and account deletions: long I/O, apart from generation. */
  accountData: 'render-studio-account-data',
  /** Webhook deliveries: one workflow per endpoint, its sends (mostly waiting on receivers) and the log's pruning. */
  webhooks: 'render-studio-webhooks',
} as const;

export type TaskQueueName = keyof typeof TASK_QUEUES;
export type TaskQueue = (typeof TASK_QUEUES)[TaskQueueName];
