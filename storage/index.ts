import type { AppConfig } from '../config/env';
import { LocalDiskStorage } from './localDiskStorage';
import type { ObjectStorage } from './objectStorage';
import { UrlSigner } from './signedUrls';

export * from './objectStorage';
export { LocalDiskStorage } from './localDiskStorage';
export { UrlSigner, fileUrl, parseFileUrl, FILES_ROUTE_PREFIX, type FileRef, type SignatureCheck } from './signedUrls';

/** What the app and the workers use to keep files and hand out links to them. */
export interface Storage {
  objects: ObjectStorage;
  urls: UrlSigner;
}

export function createStorage(config: Pick<AppConfig, 'storageDir' | 'signingSecret' | 'signedUrlTtlSeconds'>): Storage {
  return {
    objects: new LocalDiskStorage(config.storageDir),
    urls: new UrlSigner({ secret: config.signingSecret, ttlSeconds: config.signedUrlTtlSeconds }),
  };
}
