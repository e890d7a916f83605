/**
 * loudnorm's first pass (EBU R128): runs a filter graph that ends in loudnorm with print_format=json over one input
 * and reads the measurement ffmpeg prints at the end of its log. No policy: the graph (domain/assemblyTimeline.ts
 * `soundtrackMeasureFilter`) says what is measured, the caller what the numbers mean.
 */
import type { LoudnessMeasurement } from '../../domain/assemblyTimeline';
import { ProviderError } from '../errors';
import { FFMPEG } from './ffmpeg';
import { launchProcess } from './launcher';

const STDERR_KEEP = 16_384;

const field = (json: Record<string, unknown>, name: string): number => {
  const value = json[name];
  // loudnorm prints "-inf" for silence: not a finite number, which the caller takes as "not measurable"
  return typeof value === 'string' || typeof value === 'number' ? Number(value) : NaN;
};

/** The last JSON object in loudnorm's log, as a measurement. */
export function parseLoudnormJson(log: string): LoudnessMeasurement | null {
  const start = log.lastIndexOf('{');
  const end = log.lastIndexOf('}');
  if (start < 0 || end < start) return null;
  let json: Record<string, unknown>;
  try {
    json = JSON.parse(log.slice(start, end + 1)) as Record<string, unknown>;
  } catch {
    return null;
  }
  return {
    inputI: field(json, 'input_i'),
    inputTp: field(json, 'input_tp'),
    inputLra: field(json, 'input_lra'),
    inputThresh: field(json, 'input_thresh'),
    targetOffset: field(json, 'target_offset'),
  };
}

/** Runs `graph` (reading input 0, `input`; output [aout]) to nothing and answers loudnorm's measurement. */
export function measureLoudness(input: string, graph: string, signal?: AbortSignal): Promise<LoudnessMeasurement | null> {
  const args = ['-hide_banner', '-nostdin', '-nostats', '-loglevel', 'info', '-i', input, '-filter_complex', graph, '-map', '[aout]', '-f', 'null', '-'];
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(new ProviderError('JOB_CANCELLED', 'loudness measurement aborted before it started'));
      return;
    }
    const child = launchProcess(FFMPEG, args);
    let stderr = '';
    const onAbort = () => child.kill('SIGKILL');
    signal?.addEventListener('abort', onAbort, { once: true });
    child.stdout.resume();
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      stderr = (stderr + chunk).slice(-STDERR_KEEP);
    });
    child.on('error', (error) => {
      signal?.removeEventListener('abort', onAbort);
      reject(new ProviderError('MEDIA', `ffmpeg could not start: ${error.message}`, { cause: error }));
    });
    child.on('close', (code, killed) => {
      signal?.removeEventListener('abort', onAbort);
      if (signal?.aborted) return reject(new ProviderError('JOB_CANCELLED', 'loudness measurement aborted'));
      if (code !== 0) return reject(new ProviderError('MEDIA', `ffmpeg exited with ${code ?? killed} measuring loudness: ${stderr.split('\n').slice(-4).join(' | ')}`));
      resolve(parseLoudnormJson(stderr));
    });
  });
}
