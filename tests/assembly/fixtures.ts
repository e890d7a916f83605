/**
 * Assembly tests run the real thing: the API on a port, the assembly workflow on the run's Temporal dev server with
 * a real worker on a task queue of the test's own, PostgreSQL, local storage, ffmpeg. The clips they assemble are
 * short real H.264 files (1-2 s, 320x180 or 180x320) stored and recorded the way an approved clip is.
 */
import { execFile } from 'node:child_process';
import { createReadStream } from 'node:fs';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { createApp } from '../../api/app';
import type { AppConfig } from '../../config/env';
import { logger } from '../../config/logger';
import type { AssemblyJobView } from '../../domain/assembly';
import type { ChatProvider } from '../../providers';
import { createStorage, fileUrl } from '../../storage';
import { clipTestConfig } from '../clips/fixtures';
import { createTestUser, type TestUser } from '../support/accounts';
import { testKnex } from '../support/db';
import { storedObjectExists, withStoredFile } from '../support/objectStorage';
import { request, serve, type TestServer } from '../support/http';
import { uniqueTaskQueue } from '../support/temporal';

const execFileAsync = promisify(execFile);

export interface AssemblyTestApp {
  server: TestServer;
  baseUrl: string;
  config: AppConfig;
  taskQueue: string;
  close: () => Promise<void>;
}

export async function startAssemblyApp(options: { chat?: ChatProvider; config?: Partial<AppConfig>; taskQueue?: string } = {}): Promise<AssemblyTestApp> {
  const taskQueue = options.taskQueue ?? uniqueTaskQueue('assembly');
  const config = clipTestConfig(options.config);
  const server = await serve(createApp({ config, knex: testKnex(), logger, chat: options.chat, taskQueues: { generation: taskQueue, media: taskQueue, approvals: taskQueue, accountData: taskQueue } }));
  return { server, baseUrl: server.baseUrl, config, taskQueue, close: () => server.close() };
}

export interface AssemblyUser extends TestUser {
  projectId: string;
  projectName: string;
}

export async function assemblyUser(baseUrl: string, projectName = 'Harbour View'): Promise<AssemblyUser> {
  const user = await createTestUser(baseUrl);
  const project = await request<{ project: { id: string } }>(baseUrl, '/api/projects', { token: user.token, json: { name: projectName } });
  if (project.status !== 201) throw new Error(`create project answered ${project.status} ${JSON.stringify(project.body)}`);
  return { ...user, projectId: project.body.project.id, projectName };
}

export type FixtureOrientation = 'landscape' | 'portrait';

const fixtureCache = new Map<string, Promise<string>>();
let fixtureDir: Promise<string> | null = null;

/** A short real H.264 clip (a moving test pattern in one colour), made once per kind per test file. */
function fixtureFile(orientation: FixtureOrientation, seconds: number, colour: string): Promise<string> {
  const key = `${orientation}-${seconds}-${colour}`;
  let made = fixtureCache.get(key);
  if (!made) {
    made = (async () => {
      fixtureDir ??= fs.mkdtemp(path.join(os.tmpdir(), 'assembly-fixtures-'));
      const file = path.join(await fixtureDir, `${key}.mp4`);
      const size = orientation === 'landscape' ? '320x180' : '180x320';
      await execFileAsync('ffmpeg', [
        '-v', 'error', '-y',
        '-f', 'lavfi', '-i', `testsrc2=s=${size}:r=30:d=${seconds}`,
        '-vf', `drawbox=x=0:y=0:w=iw:h=ih/3:color=${colour}:t=fill`,
        '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-an', file,
      ]);
      return file;
    })();
    fixtureCache.set(key, made);
  }
  return made;
}

export async function removeFixtures(): Promise<void> {
  if (fixtureDir) await fs.rm(await fixtureDir, { recursive: true, force: true });
  fixtureDir = null;
  fixtureCache.clear();
}

const COLOURS = ['red', 'green', 'blue', 'yellow', 'magenta', 'cyan'];

export interface StoredClip {
  id: string;
  /** a local copy of the stored bytes (the fixture it was stored from) */
  file: string;
  seconds: number;
  orientation: FixtureOrientation;
}

/**
 * An approved clip of `user` in `projectId` (default: the user's project): its file in the clips bucket and its row
 * as approval writes it (analysis_data aspectRatio and platform, duration, storage columns).
 */
export async function storeClip(
  config: AppConfig,
  user: AssemblyUser,
  options: { orientation?: FixtureOrientation; seconds?: number; index?: number; movement?: string; projectId?: string; fileName?: string } = {},
): Promise<StoredClip> {
  const orientation = options.orientation ?? 'landscape';
  const seconds = options.seconds ?? 1;
  const source = await fixtureFile(orientation, seconds, COLOURS[(options.index ?? 0) % COLOURS.length]);
  const folder = randomUUID();
  const objectPath = `${user.id}/${folder}/clip.mp4`;
  // through the run's storage (local disk or S3), as approval stores a clip
  await createStorage(config).objects.put('clips', objectPath, createReadStream(source));
  const size = (await fs.stat(source)).size;
  const aspectRatio = orientation === 'landscape' ? '16:9' : '9:16';
  const [row] = await testKnex()('clips')
    .insert({
      project_id: options.projectId ?? user.projectId,
      workspace_id: user.id,
      file_url: fileUrl('clips', objectPath),
      file_name: options.fileName ?? `Harbour - ${options.movement ?? 'Zoom In'} (${aspectRatio.replace(':', 'x')}).mp4`,
      duration: seconds,
      movement: options.movement ?? 'Zoom In',
      camera_movement: options.movement ?? 'Zoom In',
      credits_used: 4,
      file_size: size,
      analysis_data: JSON.stringify({ aspectRatio, platform: orientation === 'landscape' ? 'YouTube' : 'TikTok', fileSize: size }),
      storage_bucket: 'clips',
      storage_path: objectPath,
      storage_mime: 'video/mp4',
      storage_size: size,
    })
    .returning('id');
  return { id: row.id as string, file: source, seconds, orientation };
}

export function assemble(
  baseUrl: string,
  user: TestUser & { projectId: string },
  clipIds: string[],
  options: { platform?: string; projectId?: string | null; order?: string[]; formats?: unknown } = {},
) {
  return request<{ success: boolean; jobId?: string; error?: string; code?: string }>(baseUrl, '/api/video/assemble', {
    token: user.token,
    json: {
      projectId: options.projectId === undefined ? user.projectId : options.projectId,
      platform: options.platform ?? 'youtube',
      ...(options.formats !== undefined ? { formats: options.formats } : {}),
      contentItems: clipIds.map((id) => ({ id, type: 'clip', file_url: `/api/files/clips/${id}`, file_name: `${id}.mp4` })),
      clipOrder: options.order ?? clipIds,
    },
  });
}

export async function assemblyStatus(baseUrl: string, user: TestUser, jobId: string): Promise<AssemblyJobView> {
  const res = await request<{ success: boolean; job: AssemblyJobView }>(baseUrl, `/api/video/assemble?jobId=${jobId}`, { token: user.token });
  if (res.status !== 200) throw new Error(`status answered ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.job;
}

export async function waitForAssembly(
  baseUrl: string,
  user: TestUser,
  jobId: string,
  options: { timeoutMs?: number; intervalMs?: number; until?: (job: AssemblyJobView) => boolean } = {},
): Promise<{ job: AssemblyJobView; seen: AssemblyJobView[] }> {
  const until = options.until ?? ((job: AssemblyJobView) => ['completed', 'failed', 'cancelled'].includes(job.status));
  const deadline = Date.now() + (options.timeoutMs ?? 180_000);
  const seen: AssemblyJobView[] = [];
  for (;;) {
    const job = await assemblyStatus(baseUrl, user, jobId);
    seen.push(job);
    if (until(job)) return { job, seen };
    if (Date.now() > deadline) throw new Error(`assembly ${jobId} still ${job.status} (${job.progress}%: ${job.message}) after ${options.timeoutMs ?? 180_000} ms`);
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 250));
  }
}

export async function probeOutput(file: string): Promise<{ codec: string; width: number; height: number; duration: number; pixFmt: string }> {
  const { stdout } = await execFileAsync('ffprobe', ['-v', 'error', '-select_streams', 'v:0', '-show_entries', 'stream=codec_name,width,height,pix_fmt:format=duration', '-of', 'json', file]);
  const parsed = JSON.parse(stdout) as { streams: Array<{ codec_name: string; width: number; height: number; pix_fmt: string }>; format: { duration: string } };
  const s = parsed.streams[0];
  return { codec: s.codec_name, width: s.width, height: s.height, duration: Number(parsed.format.duration), pixFmt: s.pix_fmt };
}

/** One frame at `atSeconds` as raw greyscale pixels, `size` x `size` (for comparing renders). */
export async function grabFrame(file: string, atSeconds: number, size = 96): Promise<Buffer> {
  const { stdout } = await execFileAsync('ffmpeg', ['-v', 'error', '-ss', String(atSeconds), '-i', file, '-frames:v', '1', '-vf', `scale=${size}:${size},format=gray`, '-f', 'rawvideo', 'pipe:1'], {
    encoding: 'buffer',
    maxBuffer: 16 * 1024 * 1024,
  });
  return stdout as unknown as Buffer;
}

/** Runs `fn` with a local path of one of an assembly's stored files (video.mp4, preview.mp4, thumbnail.webp), on any backend. */
export function withAssemblyFile<T>(userId: string, jobId: string, name: string, fn: (file: string) => Promise<T>): Promise<T> {
  return withStoredFile('videos', `${userId}/${jobId}/${name}`, fn);
}

/** Whether one of an assembly's files is stored (asked of the run's storage). */
export function assemblyFileStored(userId: string, jobId: string, name: string): Promise<boolean> {
  return storedObjectExists('videos', `${userId}/${jobId}/${name}`);
}
