/**
 * ffmpeg and ffprobe as child processes (started through ./launcher): progress from `-progress pipe:1`, ffmpeg's own CPU time from
 * `-benchmark`, abort by signal. No policy: callers decide what to run and what a failure means.
 */
import { ProviderError } from '../errors';
import { launchProcess } from './launcher';

export const FFMPEG = process.env.FFMPEG_PATH ?? 'ffmpeg';
export const FFPROBE = process.env.FFPROBE_PATH ?? 'ffprobe';

export interface FfmpegRunOptions {
  /** Expected output duration, to turn out_time into a fraction. */
  durationSeconds: number;
  onProgress?: (fraction: number) => void;
  signal?: AbortSignal;
}

export interface FfmpegRunStats {
  wallMs: number;
  userSeconds?: number;
  systemSeconds?: number;
  /** frames written, from the run's last `-progress` block */
  frames?: number;
  /** the first output's video stream as ffmpeg reported it ("Output #0 ... Stream #0:0: Video: ...") */
  outputVideo?: { codec: string; pixelFormat: string; width: number; height: number; fps: number };
}

const STDERR_KEEP = 8192;

/** The first video stream of ffmpeg's "Output #0" header (info log level), or undefined when it is not there. */
export function parseOutputVideo(stderr: string): FfmpegRunStats['outputVideo'] {
  const header = stderr.slice(stderr.indexOf('Output #0'));
  if (header.length === stderr.length && !stderr.startsWith('Output #0')) return undefined;
  const m = /Stream #0:\d+[^:]*: Video: (\w+)[^,]*, (\w+)[^,]*?(?:\([^)]*\))?, (\d+)x(\d+)[^\n]*?, ([\d.]+) fps/.exec(header);
  if (!m) return undefined;
  return { codec: m[1], pixelFormat: m[2], width: Number(m[3]), height: Number(m[4]), fps: Number(m[5]) };
}

export function runFfmpeg(args: string[], options: FfmpegRunOptions): Promise<FfmpegRunStats> {
  const started = Date.now();
  const fullArgs = ['-hide_banner', '-nostdin', '-nostats', '-loglevel', 'info', '-benchmark', '-progress', 'pipe:1', ...args];
  return new Promise<FfmpegRunStats>((resolve, reject) => {
    if (options.signal?.aborted) {
      reject(new ProviderError('JOB_CANCELLED', 'ffmpeg run aborted before it started'));
      return;
    }
    const child = launchProcess(FFMPEG, fullArgs);
    let stderr = '';
    // the start of the log (the output header) is kept apart from its tail
    let stderrHead = '';
    let pending = '';
    let lastFraction = -1;
    let frames: number | undefined;
    const onAbort = () => child.kill('SIGKILL');
    options.signal?.addEventListener('abort', onAbort, { once: true });

    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      pending += chunk;
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) {
        const [key, value] = line.trim().split('=');
        if (key === 'frame' && /^\d+$/.test(value ?? '')) frames = Number(value);
        let fraction: number | null = null;
        if (key === 'out_time_us' && /^\d+$/.test(value ?? '')) fraction = Math.min(1, Number(value) / 1e6 / options.durationSeconds);
        else if (key === 'progress' && value === 'end') fraction = 1;
        if (fraction !== null && fraction > lastFraction) {
          lastFraction = fraction;
          options.onProgress?.(fraction);
        }
      }
    });
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      if (stderrHead.length < STDERR_KEEP) stderrHead = (stderrHead + chunk).slice(0, STDERR_KEEP);
      stderr = (stderr + chunk).slice(-STDERR_KEEP);
    });
    child.on('error', (error) => {
      options.signal?.removeEventListener('abort', onAbort);
      reject(new ProviderError('MEDIA', `ffmpeg could not start: ${error.message}`, { cause: error }));
    });
    child.on('close', (code, signal) => {
      options.signal?.removeEventListener('abort', onAbort);
      if (options.signal?.aborted) {
        reject(new ProviderError('JOB_CANCELLED', 'ffmpeg run aborted'));
        return;
      }
      if (code !== 0) {
        const tail = stderr.split('\n').filter((l) => l.trim() && !l.startsWith('bench:')).slice(-4).join(' | ');
        reject(new ProviderError('MEDIA', `ffmpeg exited with ${code ?? signal}: ${tail}`));
        return;
      }
      const bench = /bench: utime=([\d.]+)s stime=([\d.]+)s/.exec(stderr);
      resolve({
        wallMs: Date.now() - started,
        userSeconds: bench ? Number(bench[1]) : undefined,
        systemSeconds: bench ? Number(bench[2]) : undefined,
        frames,
        outputVideo: parseOutputVideo(stderrHead),
      });
    });
  });
}

export interface VideoProbe {
  codec: string;
  width: number;
  height: number;
  durationSeconds: number;
  fps: number;
  frames: number | null;
  pixelFormat: string;
}

function runCapture(binary: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = launchProcess(binary, args);
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (err = (err + c).slice(-STDERR_KEEP)));
    child.on('error', (error) => reject(new ProviderError('MEDIA', `${binary} could not start: ${error.message}`, { cause: error })));
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new ProviderError('MEDIA', `${binary} exited with ${code}: ${err.trim()}`))));
  });
}

export async function probeVideo(path: string): Promise<VideoProbe> {
  const out = await runCapture(FFPROBE, [
    '-v', 'error',
    '-select_streams', 'v:0',
    '-show_entries', 'stream=codec_name,width,height,r_frame_rate,nb_frames,pix_fmt:format=duration',
    '-of', 'json',
    path,
  ]);
  const parsed = JSON.parse(out) as {
    streams?: Array<{ codec_name?: string; width?: number; height?: number; r_frame_rate?: string; nb_frames?: string; pix_fmt?: string }>;
    format?: { duration?: string };
  };
  const stream = parsed.streams?.[0];
  if (!stream?.width || !stream.height) throw new ProviderError('MEDIA', `No video stream in ${path}`);
  const [num, den] = (stream.r_frame_rate ?? '0/1').split('/').map(Number);
  return {
    codec: stream.codec_name ?? 'unknown',
    width: stream.width,
    height: stream.height,
    durationSeconds: Number(parsed.format?.duration ?? 0),
    fps: den ? num / den : 0,
    frames: stream.nb_frames ? Number(stream.nb_frames) : null,
    pixelFormat: stream.pix_fmt ?? 'unknown',
  };
}

/** What ffprobe tells of a file that may be audio: its container and every stream. No policy: the caller decides what is acceptable. */
export interface AudioProbe {
  /** ffprobe's format_name, e.g. 'mp3', 'wav', 'flac', 'aac', 'mov,mp4,m4a,3gp,3g2,mj2'. */
  formatName: string;
  durationSeconds: number | null;
  streams: Array<{ type: string; codec: string; channels: number | null; sampleRate: number | null; durationSeconds: number | null; attachedPicture: boolean }>;
}

const numberOrNull = (value: unknown): number | null => {
  const n = typeof value === 'string' || typeof value === 'number' ? Number(value) : NaN;
  return Number.isFinite(n) ? n : null;
};

/** ffprobe's view of `path`; a ProviderError('MEDIA') when ffprobe cannot read it at all. */
export async function probeAudio(path: string): Promise<AudioProbe> {
  const out = await runCapture(FFPROBE, [
    '-v', 'error',
    '-show_entries', 'format=format_name,duration:stream=codec_type,codec_name,channels,sample_rate,duration:stream_disposition=attached_pic',
    '-of', 'json',
    path,
  ]);
  let parsed: {
    format?: { format_name?: string; duration?: string };
    streams?: Array<{ codec_type?: string; codec_name?: string; channels?: number; sample_rate?: string; duration?: string; disposition?: { attached_pic?: number } }>;
  };
  try {
    parsed = JSON.parse(out) as typeof parsed;
  } catch {
    throw new ProviderError('MEDIA', `ffprobe answered no JSON for ${path}`);
  }
  return {
    formatName: parsed.format?.format_name ?? '',
    durationSeconds: numberOrNull(parsed.format?.duration),
    streams: (parsed.streams ?? []).map((s) => ({
      type: s.codec_type ?? 'unknown',
      codec: s.codec_name ?? 'unknown',
      channels: numberOrNull(s.channels),
      sampleRate: numberOrNull(s.sample_rate),
      durationSeconds: numberOrNull(s.duration),
      attachedPicture: s.disposition?.attached_pic === 1,
    })),
  };
}

/**
 * Decodes the first audio stream of `path` to nothing and answers the seconds decoded; a ProviderError('MEDIA') when
 * ffmpeg fails. A file whose header probes well but whose data does not decode answers (close to) 0.
 */
export async function decodedAudioSeconds(path: string): Promise<number> {
  const out = await runCapture(FFMPEG, ['-hide_banner', '-nostdin', '-v', 'error', '-i', path, '-map', '0:a:0', '-f', 'null', '-progress', 'pipe:1', '-']);
  const times = [...out.matchAll(/^out_time_us=(\d+)$/gm)].map((m) => Number(m[1]));
  return times.length ? Math.max(...times) / 1e6 : 0;
}
