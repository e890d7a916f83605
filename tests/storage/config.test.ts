import { ConfigError, loadConfig } from '../../config/env';
import { storageOrigins } from '../../api/middleware/securityHeaders';
import { createStorage, LocalDiskStorage, PresignedFileLinks, S3ObjectStorage, UrlSigner } from '../../storage';

const base = { SIGNING_SECRET: 'x'.repeat(40), STORAGE_DIR: '/tmp/rs-config-test' };

describe('storage configuration', () => {
  it('keeps files on local disk unless STORAGE_BACKEND=s3', () => {
    const config = loadConfig({ ...base });
    expect(config.storageBackend).toBe('local');
    const storage = createStorage(config);
    expect(storage.backend).toBe('local');
    expect(storage.objects).toBeInstanceOf(LocalDiskStorage);
    expect(storage.urls).toBeInstanceOf(UrlSigner);
    expect(storageOrigins(config)).toEqual([]);
  });

  it('builds the S3 backend from S3_*, with presigned links for the public address', () => {
    const config = loadConfig({
      ...base,
      STORAGE_BACKEND: 's3',
      S3_ENDPOINT: 'http://seaweedfs:8333/',
      S3_PUBLIC_URL: 'https://files.example.com',
      S3_REGION: 'eu-central-1',
      S3_BUCKET_PREFIX: 'acme-',
      S3_ACCESS_KEY_ID: 'key',
      S3_SECRET_ACCESS_KEY: 'secret',
    });
    expect(config.s3).toEqual({
      endpoint: 'http://seaweedfs:8333',
      publicUrl: 'https://files.example.com',
      region: 'eu-central-1',
      bucketPrefix: 'acme-',
      accessKeyId: 'key',
      secretAccessKey: 'secret',
      forcePathStyle: true,
      conditionalPut: 'auto',
    });
    const storage = createStorage(config);
    expect(storage.backend).toBe('s3');
    expect(storage.objects).toBeInstanceOf(S3ObjectStorage);
    expect((storage.objects as S3ObjectStorage).bucketName('clips')).toBe('acme-clips');
    expect(storage.urls).toBeInstanceOf(PresignedFileLinks);
    expect(storage.urls.sign('clips', 'u/c.mp4')).toMatch(/^https:\/\/files\.example\.com\/acme-clips\/u\/c\.mp4\?X-Amz-Algorithm=AWS4-HMAC-SHA256&/);
    expect(storageOrigins(config)).toEqual(['https://files.example.com']);
    (storage.objects as S3ObjectStorage).close();
  });

  it('addresses AWS S3 by bucket host name when no endpoint is given', () => {
    const config = loadConfig({ ...base, STORAGE_BACKEND: 's3', S3_REGION: 'eu-west-1', S3_ACCESS_KEY_ID: 'key', S3_SECRET_ACCESS_KEY: 'secret' });
    expect(config.s3.forcePathStyle).toBe(false);
    expect(createStorage(config).urls.sign('renders', 'u/a.png')).toMatch(/^https:\/\/render-studio-renders\.s3\.eu-west-1\.amazonaws\.com\/u\/a\.png\?/);
    expect(storageOrigins(config)).toEqual(['https://*.s3.eu-west-1.amazonaws.com']);
  });

  it.each([
    [{ STORAGE_BACKEND: 'gcs' }, /STORAGE_BACKEND must be "local" or "s3"/],
    [{ STORAGE_BACKEND: 's3' }, /needs S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY/],
    [{ STORAGE_BACKEND: 's3', S3_ACCESS_KEY_ID: 'key' }, /needs S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY/],
    [{ S3_BUCKET_PREFIX: 'Has_Capitals' }, /S3_BUCKET_PREFIX must be lowercase/],
    [{ S3_CONDITIONAL_PUT: 'sometimes' }, /S3_CONDITIONAL_PUT must be/],
  ])('refuses %j with a ConfigError naming the variable', (env, message) => {
    expect(() => loadConfig({ ...base, ...env })).toThrow(ConfigError);
    expect(() => loadConfig({ ...base, ...env })).toThrow(message);
  });
});
