/**
 * The full edit and its formats (issue 44, item 6), run by bench/assembly.ts on its stack after the plain join:
 *
 * 1. The full edit at 1080x1920: five portrait clips with the workspace's brand kit saved (logo, colours, font, contact
 *    lines), so the edit has a title card, brand captions (the chat wrote them), the logo watermark and an end card,
 *    and music (a stereo track of the workspace at 80 %, loudness-normalised). Through the API and the worker, against
 *    the bare ffmpeg command with the same filter graph: the timeline the job rendered (its `assembly_jobs` row) made
 *    into that one run's arguments by the worker's own code (`prepareEditRender`: caption files, stills, graph, the
 *    music measured), then only the ffmpeg run timed. Target: the API path at most 1.2x the bare command's wall time.
 * 2. Four formats from one edit (9:16, 1:1, 4:5, 16:9 in one assembly) against four single-format assemblies of the same
 *    edit one after another, both through the API. Target: the one assembly at least 1.5x faster in wall time.
 *
 * Env: BENCH_ROUNDS (3, for part 1), BENCH_FORMAT_ROUNDS (1, for part 2), BENCH_CLIP_SECONDS (5), VIDEO_PRESET.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import type { Knex } from 'knex';
import { prepareEditRender } from '../../activities/assemblyMedia';
import { ASSEMBLY_FORMATS, type AssemblyFormat, type AssemblyJobView } from '../../domain/assembly';
import { brandPartOf, videoTrackOf, type AssemblyEdit } from '../../domain/assemblyTimeline';
import { FFMPEG } from '../../providers/media/ffmpeg';
import { fileUrl, parseFileUrl } from '../../storage';
import { callApi } from '../support/benchClient';
import { figure, ratio, type BenchMeasure } from '../support/results';
import { median } from '../support/stats';
import { makeClip, run, timedFfmpeg, processTreeCpu, type Timed } from './media';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const FORMAT_ROUNDS = Number(process.env.BENCH_FORMAT_ROUNDS ?? 1);
const PRESET = process.env.VIDEO_PRESET ?? 'veryfast';
const CLIP_SECONDS = Number(process.env.BENCH_CLIP_SECONDS ?? 5);
const CLIPS = 5;
const FULL_EDIT_TARGET = 1.2;
const FORMATS_TARGET = 1.5;

export interface FullEditStack {
  api: { baseUrl: string; child: { pid?: number } };
  worker: { child: { pid?: number } };
  storageDir: string;
  knex: Knex;
  user: { userId: string; token: string };
  workDir: string;
}

async function expectStatus<T>(what: string, call: Promise<{ status: number; body: T }>, status = 200): Promise<T> {
  const res = await call;
  if (res.status !== status) throw new Error(`${what} answered ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** A raw-body call (the logo, a music track). */
async function putBytes(baseUrl: string, token: string, method: string, route: string, bytes: Buffer): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${baseUrl}${route}`, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/octet-stream' }, body: new Uint8Array(bytes) });
  return { status: res.status, body: await res.json() };
}

/** The project: five portrait clips, the brand kit with its logo, a music track at 80 %, captions from the chat. */
async function setUp(stack: FullEditStack): Promise<{ projectId: string; clipIds: string[]; clipFiles: Map<string, string> }> {
  const { api, user, knex, storageDir, workDir } = stack;
  const project = await expectStatus('POST /api/projects', callApi<{ project: { id: string } }>(api.baseUrl, user.token, '/api/projects', { json: { name: 'Harbour Villas' } }), 201);
  const projectId = project.project.id;

  const clipIds: string[] = [];
  const clipFiles = new Map<string, string>();
  for (let i = 0; i < CLIPS; i += 1) {
    const objectPath = `${user.userId}/${randomUUID()}/clip.mp4`;
    const file = path.join(storageDir, 'clips', objectPath);
    await fs.mkdir(path.dirname(file), { recursive: true });
    await makeClip(file, i, 720, 1280, CLIP_SECONDS);
    const [row] = await knex('clips')
      .insert({
        project_id: projectId,
        workspace_id: user.userId,
        file_url: fileUrl('clips', objectPath),
        file_name: `Portrait clip ${i + 1}.mp4`,
        duration: CLIP_SECONDS,
        camera_movement: 'Zoom In',
        analysis_data: JSON.stringify({ aspectRatio: '9:16' }),
        storage_bucket: 'clips',
        storage_path: objectPath,
        storage_mime: 'video/mp4',
        storage_size: (await fs.stat(file)).size,
      })
      .returning('id');
    clipIds.push(row.id as string);
    clipFiles.set(row.id as string, file);
  }

  const kitRoute = `/api/workspaces/${user.userId}/brand-kit`;
  await expectStatus(
    'PUT brand-kit',
    callApi(api.baseUrl, user.token, kitRoute, {
      method: 'PUT',
      json: { primaryColor: '#1F3A5F', secondaryColor: '#E0B050', font: 'Inter', contact: { company: 'Harbour Estates', phone: '+44 20 7946 0000', website: 'harbour.example' }, callToAction: 'Book a viewing' },
    }),
  );
  const logo = await sharp({ create: { width: 600, height: 240, channels: 4, background: { r: 0, g: 0, b: 0, alpha: 0 } } })
    .composite([{ input: Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="600" height="240"><rect x="20" y="20" width="560" height="200" rx="40" fill="#E0B050"/><circle cx="120" cy="120" r="70" fill="#1F3A5F"/></svg>') }])
    .png()
    .toBuffer();
  const logoAnswer = await putBytes(api.baseUrl, user.token, 'PUT', `${kitRoute}/logo`, logo);
  if (logoAnswer.status !== 200) throw new Error(`PUT brand-kit/logo answered ${logoAnswer.status} ${JSON.stringify(logoAnswer.body)}`);

  const trackFile = path.join(workDir, 'bench-track.m4a');
  await run(FFMPEG, [
    '-v', 'error', '-y',
    '-f', 'lavfi', '-i', 'sine=frequency=220:duration=90',
    '-f', 'lavfi', '-i', 'anoisesrc=color=pink:amplitude=0.2:duration=90',
    '-filter_complex', '[0:a][1:a]amerge=inputs=2,volume=0.5[a]', '-map', '[a]', '-ac', '2', '-c:a', 'aac', '-b:a', '128k', trackFile,
  ]);
  const track = await putBytes(api.baseUrl, user.token, 'POST', `/api/workspaces/${user.userId}/music?name=bench-track.m4a`, await fs.readFile(trackFile));
  if (track.status !== 201) throw new Error(`POST music answered ${track.status} ${JSON.stringify(track.body)}`);
  const trackId = (track.body as { track: { id: string } }).track.id;
  await expectStatus('PUT aesthetic/music', callApi(api.baseUrl, user.token, `/api/projects/${projectId}/aesthetic/music`, { method: 'PUT', json: { trackId, volume: 0.8 } }));

  // captions in the brand's font: the chat writes one per clip
  const chat = await expectStatus(
    'POST aesthetic',
    callApi<{ editing_config: { captions: string[] } }>(api.baseUrl, user.token, `/api/projects/${projectId}/aesthetic`, {
      json: { message: 'Luxury look, calm pace, professional captions', selected_clips: clipIds },
    }),
  );
  if (chat.editing_config.captions.length === 0) throw new Error('the chat wrote no captions');
  return { projectId, clipIds, clipFiles };
}

interface Assembled extends Timed {
  job: AssemblyJobView;
}

/** One assembly through the API to its end, its worker + ffmpeg + API CPU, every item it made approved (free). */
async function assemble(stack: FullEditStack, projectId: string, clipIds: string[], formats: AssemblyFormat[]): Promise<Assembled> {
  const { api, user } = stack;
  const workerPid = stack.worker.child.pid as number;
  const apiPid = api.child.pid as number;
  const w0 = processTreeCpu(workerPid);
  const a0 = processTreeCpu(apiPid);
  const started = process.hrtime.bigint();
  const res = await expectStatus(
    'POST /api/video/assemble',
    callApi<{ jobId: string }>(api.baseUrl, user.token, '/api/video/assemble', {
      json: { projectId, platform: 'tiktok', contentItems: clipIds.map((id) => ({ id, type: 'clip' })), clipOrder: clipIds, formats },
    }),
  );
  let job: AssemblyJobView;
  for (;;) {
    job = (await callApi<{ job: AssemblyJobView }>(api.baseUrl, user.token, `/api/video/assemble?jobId=${res.jobId}`)).body.job;
    if (job.status !== 'pending' && job.status !== 'processing') break;
    await new Promise((r) => setTimeout(r, 250));
  }
  const wallS = Number(process.hrtime.bigint() - started) / 1e9;
  if (job.status !== 'completed' || !job.result) throw new Error(`assembly ended ${job.status}: ${job.error}`);
  // the worker's last ffmpeg child reaped into cutime
  await new Promise((r) => setTimeout(r, 300));
  const w1 = processTreeCpu(workerPid);
  const cpuS = w1 - w0 + (processTreeCpu(apiPid) - a0);
  const approvals = job.result.formats ? job.result.formats.map((f) => f.approvalId) : [job.result.approvalId];
  for (const approvalId of approvals) await expectStatus('approve', callApi(api.baseUrl, user.token, '/api/approvals/approve', { json: { approvalId } }));
  return { wallS, cpuS, job };
}

/** A stored file's path in the stack's local storage. */
function storedFile(storageDir: string, url: string): string {
  const ref = parseFileUrl(url);
  if (!ref) throw new Error(`not a stored file: ${url}`);
  return path.join(storageDir, ref.bucket, ref.path);
}

/** The bare command of a job's timeline: made by the worker's own code, then only its ffmpeg run timed. */
async function bareRender(stack: FullEditStack, jobId: string, workDir: string): Promise<Timed> {
  const row = (await stack.knex('assembly_jobs').where({ id: jobId }).first('options')) as { options: { timeline: AssemblyEdit } };
  const edit = row.options.timeline;
  const inputs = videoTrackOf(edit).map((clip) => storedFile(stack.storageDir, clip.asset.src));
  const logoSrc = brandPartOf(edit, 'logo')?.asset.src ?? brandPartOf(edit, 'endCard')?.asset.logoSrc ?? null;
  if (!edit.timeline.soundtrack || !logoSrc || !brandPartOf(edit, 'titleCard') || !brandPartOf(edit, 'endCard')) throw new Error('the job did not render the full edit');
  const scratch = await fs.mkdtemp(path.join(workDir, 'bare-'));
  try {
    const args = await prepareEditRender(edit, inputs, path.join(scratch, 'video.mp4'), scratch, {
      preset: PRESET,
      previewOutput: path.join(scratch, 'preview.mp4'),
      soundtrackFile: storedFile(stack.storageDir, edit.timeline.soundtrack.src),
      logoFile: storedFile(stack.storageDir, logoSrc),
    });
    return await timedFfmpeg(args);
  } finally {
    await fs.rm(scratch, { recursive: true, force: true });
  }
}

export async function benchFullEdit(stack: FullEditStack): Promise<BenchMeasure[]> {
  const { projectId, clipIds } = await setUp(stack);
  const say = (line: string) => process.stdout.write(`${line}\n`);
  say(
    `\nfull edit (title card, brand captions, logo, end card, music) of ${CLIPS} portrait clips (720x1280, ${CLIP_SECONDS} s) into 1080x1920, x264 ${PRESET}, ` +
      `${ROUNDS} rounds alternating, load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`,
  );
  // a warm-up: the worker's brand and music paths, the files in the page cache
  let lastJobId = (await assemble(stack, projectId, clipIds, ['9:16'])).job.jobId;
  const viaApi: Timed[] = [];
  const bare: Timed[] = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    const order = round % 2 === 0 ? ['api', 'bare'] : ['bare', 'api'];
    for (const which of order) {
      if (which === 'api') {
        const done = await assemble(stack, projectId, clipIds, ['9:16']);
        viaApi.push(done);
        lastJobId = done.job.jobId;
      } else {
        // the timeline of the latest job: every one of them renders the same edit
        bare.push(await bareRender(stack, lastJobId, stack.workDir));
      }
    }
    const a = viaApi.at(-1) as Timed;
    const b = bare.at(-1) as Timed;
    say(`round ${round + 1}: API ${a.wallS.toFixed(2)} s wall, ${a.cpuS.toFixed(2)} s CPU | bare ffmpeg ${b.wallS.toFixed(2)} s wall, ${b.cpuS.toFixed(2)} s CPU`);
  }
  const fullWall = median(viaApi.map((r) => r.wallS)) / median(bare.map((r) => r.wallS));
  const fullCpu = median(viaApi.map((r) => r.cpuS)) / median(bare.map((r) => r.cpuS));
  say(`full edit, API / bare: wall x${fullWall.toFixed(2)}, CPU x${fullCpu.toFixed(2)} (target: wall at most x${FULL_EDIT_TARGET}): ${fullWall <= FULL_EDIT_TARGET ? 'met' : 'NOT met'}`);

  say(`\nfour formats (${ASSEMBLY_FORMATS.join(', ')}) from one edit against four single-format assemblies, ${FORMAT_ROUNDS} round(s)`);
  const together: number[] = [];
  const apart: number[] = [];
  for (let round = 0; round < FORMAT_ROUNDS; round += 1) {
    const one = await assemble(stack, projectId, clipIds, [...ASSEMBLY_FORMATS]);
    if (one.job.result?.formats?.length !== ASSEMBLY_FORMATS.length) throw new Error('the four-format assembly did not make four videos');
    let singles = 0;
    for (const format of ASSEMBLY_FORMATS) singles += (await assemble(stack, projectId, clipIds, [format])).wallS;
    together.push(one.wallS);
    apart.push(singles);
    say(`round ${round + 1}: one assembly of four formats ${one.wallS.toFixed(2)} s | four single-format assemblies ${singles.toFixed(2)} s`);
  }
  const formatsSpeedup = median(apart) / median(together);
  say(`four formats: x${formatsSpeedup.toFixed(2)} faster than four single runs (target at least x${FORMATS_TARGET}): ${formatsSpeedup >= FORMATS_TARGET ? 'met' : 'NOT met'}`);

  return [
    ratio('full_edit_wall_vs_bare_ffmpeg', fullWall, 'lower', 'full edit (title, brand captions, logo, end card, music) at 1080x1920 through the API against the bare command with the same filter graph, wall time', FULL_EDIT_TARGET),
    ratio('full_edit_cpu_vs_bare_ffmpeg', fullCpu, 'lower', 'the same, CPU seconds (worker, its ffmpeg and the API against the bare command)'),
    figure('full_edit_api_wall_median', median(viaApi.map((r) => r.wallS)), 's', 'lower', 'median wall time of one full-edit assembly through the API'),
    ratio('four_formats_speedup', formatsSpeedup, 'higher', 'four single-format assemblies one after another over one assembly of the four formats, wall time', FORMATS_TARGET),
  ];
}
