/** Every workflow the workers run (bundled from this file), with the signals, queries and updates beside each. */
export * from './tryItOnboarding';
export * from './approval';
export * from './imageEdit';
export * from './clipGeneration';
export * from './dataExport';
export * from './accountDeletion';
export * from './draftJob';
export * from './assembly';
export * from './renderThumbnail';
export * from './storageMaintenance';
export * from './paymentRefund';
export * from './webhookDelivery';
export * from './notificationDigest';
