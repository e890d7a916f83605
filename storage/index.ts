import type { AppConfig } from '../config/env';
import { LocalDiskStorage } from './localDiskStorage';
import type { ObjectStorage } from './objectStorage';
import { PresignedFileLinks, S3Presigner } from './s3Presigner';
import { S3ObjectStorage } from './s3ObjectStorage';
import { UrlSigner, type FileLinks } from './signedUrls';
import { tracingActive } from '../config/tracing';
import { tracedObjectStorage } from './tracedObjectStorage';

export * from './objectStorage';
export { LocalDiskStorage } from './localDiskStorage';
export { S3ObjectStorage, type S3StorageOptions, type ConditionalPutMode } from './s3ObjectStorage';
export { S3Presigner, PresignedFileLinks } from './s3Presigner';
export { contentTypeOf, downloadsAsAttachment, attachmentDisposition, OBJECT_CACHE_SECONDS } from './contentTypes';
export { UrlSigner, fileUrl, parseFileUrl, FILES_ROUTE_PREFIX, type FileLinks, type FileRef, type SignatureCheck } from './signedUrls';

/** What the app and the workers use to keep files and hand out links to them. */
export interface Storage {
  backend: 'local' | 's3';
  objects: ObjectStorage;
  /** Links browsers load files from: the API's /api/files route (local) or presigned object storage URLs (s3). */
  urls: FileLinks;
}

export type StorageConfig = Pick<AppConfig, 'storageDir' | 'signingSecret' | 'signedUrlTtlSeconds'> & Partial<Pick<AppConfig, 'storageBackend' | 's3' | 'publicUrl'>>;

/** Just the storage settings of an app's configuration (what a worker thread is handed to make the same storage). */
export function storageConfigOf(config: AppConfig): StorageConfig {
  const { storageDir, signingSecret, signedUrlTtlSeconds, storageBackend, s3, publicUrl } = config;
  return { storageDir, signingSecret, signedUrlTtlSeconds, storageBackend, s3, publicUrl };
}

/** One S3 client per configuration and process: its connections and its knowledge of which buckets exist are shared. */
const s3Backends = new Map<string, S3ObjectStorage>();

export function s3BackendFor(s3: AppConfig['s3'], publicUrl?: string): S3ObjectStorage {
  const corsOrigins = publicUrl ? [new URL(publicUrl).origin] : [];
  const key = JSON.stringify([s3.endpoint, s3.region, s3.bucketPrefix, s3.accessKeyId, s3.secretAccessKey, s3.forcePathStyle, s3.conditionalPut, corsOrigins]);
  let backend = s3Backends.get(key);
  if (!backend) {
    backend = new S3ObjectStorage({
      endpoint: s3.endpoint || undefined,
      region: s3.region,
      bucketPrefix: s3.bucketPrefix,
      accessKeyId: s3.accessKeyId,
      secretAccessKey: s3.secretAccessKey,
      forcePathStyle: s3.forcePathStyle,
      conditionalPut: s3.conditionalPut,
      corsOrigins,
    });
    s3Backends.set(key, backend);
  }
  return backend;
}

export function createStorage(config: StorageConfig): Storage {
  if (config.storageBackend === 's3' && config.s3) {
    const objects = s3BackendFor(config.s3, config.publicUrl);
    const presigner = new S3Presigner({
      endpoint: config.s3.publicUrl || undefined,
      region: config.s3.region,
      accessKeyId: config.s3.accessKeyId,
      secretAccessKey: config.s3.secretAccessKey,
      forcePathStyle: config.s3.forcePathStyle,
    });
    return {
      backend: 's3',
      objects: tracingActive() ? tracedObjectStorage(objects) : objects,
      urls: new PresignedFileLinks({ presigner, bucketName: (bucket) => objects.bucketName(bucket), ttlSeconds: config.signedUrlTtlSeconds }),
    };
  }
  return {
    backend: 'local',
    objects: tracingActive() ? tracedObjectStorage(new LocalDiskStorage(config.storageDir)) : new LocalDiskStorage(config.storageDir),
    urls: new UrlSigner({ secret: config.signingSecret, ttlSeconds: config.signedUrlTtlSeconds }),
  };
}
