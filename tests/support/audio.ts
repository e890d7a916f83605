/**
 * Test audio made with ffmpeg at run time (no binary fixtures): tones and noise in each accepted format and a few
 * that are not, and the integrated loudness of a file measured with ffmpeg's ebur128 filter.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

export type AudioKind = 'mp3' | 'wav' | 'm4a' | 'aac' | 'flac' | 'aiff' | 'video';

const ENCODE: Record<AudioKind, { ext: string; args: string[] }> = {
  mp3: { ext: 'mp3', args: ['-c:a', 'libmp3lame', '-b:a', '64k'] },
  wav: { ext: 'wav', args: ['-c:a', 'pcm_s16le'] },
  m4a: { ext: 'm4a', args: ['-c:a', 'aac', '-b:a', '96k'] },
  aac: { ext: 'aac', args: ['-c:a', 'aac', '-b:a', '96k', '-f', 'adts'] },
  flac: { ext: 'flac', args: ['-c:a', 'flac'] },
  aiff: { ext: 'aiff', args: ['-c:a', 'pcm_s16be'] },
  video: { ext: 'mp4', args: [] },
};

export interface AudioOptions {
  seconds?: number;
  /** a sine of this frequency (default 440 Hz), or pink noise */
  source?: 'sine' | 'noise';
  frequency?: number;
  sampleRate?: number;
  channels?: 1 | 2;
  /** gain in dB applied to the source (a quiet or loud track) */
  gainDb?: number;
}

/** An audio file of `kind` made by ffmpeg (a video of a test pattern with a tone for 'video'); its bytes. */
export async function makeAudio(kind: AudioKind, options: AudioOptions = {}): Promise<Buffer> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'test-audio-'));
  try {
    const seconds = options.seconds ?? 3;
    const rate = options.sampleRate ?? 44100;
    const source = options.source === 'noise' ? `anoisesrc=color=pink:sample_rate=${rate}:amplitude=0.3:duration=${seconds}:seed=7` : `sine=frequency=${options.frequency ?? 440}:sample_rate=${rate}:duration=${seconds}`;
    const file = path.join(dir, `audio.${ENCODE[kind].ext}`);
    const filters = [`volume=${options.gainDb ?? 0}dB`, ...(options.channels === 2 ? ['aformat=channel_layouts=stereo'] : ['aformat=channel_layouts=mono'])].join(',');
    const args =
      kind === 'video'
        ? ['-f', 'lavfi', '-i', `testsrc2=s=160x90:r=10:d=${seconds}`, '-f', 'lavfi', '-i', source, '-c:v', 'libx264', '-preset', 'ultrafast', '-c:a', 'aac', '-shortest', file]
        : ['-f', 'lavfi', '-i', source, '-af', filters, ...ENCODE[kind].args, file];
    await execFileAsync('ffmpeg', ['-v', 'error', '-y', ...args]);
    return await fs.readFile(file);
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

export interface StreamFacts {
  type: string;
  codec: string;
  channels: number | null;
  sampleRate: number | null;
  duration: number | null;
}

/** Every stream of a file, as ffprobe reports it. */
export async function probeStreams(file: string): Promise<StreamFacts[]> {
  const { stdout } = await execFileAsync('ffprobe', ['-v', 'error', '-show_entries', 'stream=codec_type,codec_name,channels,sample_rate,duration', '-of', 'json', file]);
  const parsed = JSON.parse(stdout) as { streams: Array<{ codec_type: string; codec_name: string; channels?: number; sample_rate?: string; duration?: string }> };
  return parsed.streams.map((s) => ({
    type: s.codec_type,
    codec: s.codec_name,
    channels: s.channels ?? null,
    sampleRate: s.sample_rate ? Number(s.sample_rate) : null,
    duration: s.duration ? Number(s.duration) : null,
  }));
}

/** The integrated loudness (LUFS) of a file's audio, from the summary ffmpeg's ebur128 filter prints. */
export async function integratedLoudness(file: string): Promise<number> {
  const { stderr } = await execFileAsync('ffmpeg', ['-hide_banner', '-nostats', '-i', file, '-map', '0:a:0', '-af', 'ebur128=framelog=verbose', '-f', 'null', '-'], { maxBuffer: 16 * 1024 * 1024 });
  const summary = stderr.slice(stderr.lastIndexOf('Summary:'));
  const m = /Integrated loudness:\s*I:\s*(-?[\d.]+|-inf) LUFS/.exec(summary);
  if (!m) throw new Error(`no integrated loudness in ebur128's summary: ${summary.slice(0, 400)}`);
  return Number(m[1]);
}
