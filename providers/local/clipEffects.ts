/**
 * The ffmpeg command for each video effect, from a still of any size: the graph first cover-crops it (centre,
 * lanczos) to the clip's aspect at SOURCE_MARGIN times the output size, once, before the loop. Pure: the local
 * provider runs it, the benchmark runs it bare.
 *
 * Every effect is one motion path: a zoom z(t) >= 1 and where the zoomed frame sits (fx, fy in 0..1 of
 * the slack, 0.5 = centred), plus an optional per-frame colour curve. The still is decoded once (`loop`),
 * rescaled per frame (`scale` with eval=frame, sub-pixel exact) and placed on a fixed canvas with
 * `overlay` (eval=frame). Unlike zoompan, whose crop box snaps to even source pixels, this does not jitter
 * on slow zooms; unlike scale+crop, the placement follows the frame's real size.
 */
import type { VideoEffect } from '../../domain/constants';
import type { ClipAspectRatio } from '../types';
import type { ImageSize } from '../media/images';

export const CLIP_SIZE: Record<ClipAspectRatio, ImageSize> = {
  '16:9': { width: 1280, height: 720 },
  '9:16': { width: 720, height: 1280 },
  '1:1': { width: 1080, height: 1080 },
};

/** The prepared still is this much larger than the clip, so zooms up to 1.5 never upsample. */
export const SOURCE_MARGIN = 1.5;

export function sourceSize(aspect: ClipAspectRatio): ImageSize {
  const { width, height } = CLIP_SIZE[aspect];
  const even = (n: number) => Math.round(n / 2) * 2;
  return { width: even(width * SOURCE_MARGIN), height: even(height * SOURCE_MARGIN) };
}

interface Motion {
  /** zoom factor, an ffmpeg expression of p (linear progress 0..1) and e (eased progress) */
  z: string;
  fx: string;
  fy: string;
  /** per-frame `eq` options, same variables */
  eq?: string;
}

const MOTIONS: Record<VideoEffect, Motion> = {
  'Zoom In': { z: '1+0.32*e', fx: '0.5', fy: '0.5' },
  'Pan Left': { z: '1.3', fx: '1-e', fy: '0.5' },
  'Pan Right': { z: '1.3', fx: 'e', fy: '0.5' },
  // pull back while rising: the frame drifts from the lower part of the scene to its centre
  'Drone Shot': { z: '1.45-0.4*e', fx: '0.5', fy: '1-0.5*e' },
  // walking in: a steady push with a slow side sway and a small step bob
  'Walk Through': { z: '1.06+0.38*p', fx: '0.5+0.22*sin(2*PI*p)', fy: '0.5+0.08*sin(2*PI*3.2*p)' },
  // barely moving; light breathes across the scene
  'Bring to Life': {
    z: '1+0.08*e',
    fx: '0.5+0.1*sin(PI*p)',
    fy: '0.5',
    eq: "brightness='0.045*sin(2*PI*1.2*p)':contrast='1.04+0.03*sin(2*PI*0.8*p)':saturation='1.12+0.1*sin(2*PI*0.6*p)'",
  },
  // the light goes: darker, less saturated, red down and blue up as the clip runs
  'Day to Night': {
    z: '1+0.06*p',
    fx: '0.5',
    fy: '0.5',
    eq: "brightness='-0.3*e':saturation='1-0.4*e':gamma_r='1-0.3*e':gamma_g='1-0.12*e':gamma_b='1+0.45*e'",
  },
};

export interface ClipCommand {
  source: string;
  output: string;
  effect: VideoEffect;
  aspectRatio: ClipAspectRatio;
  durationSeconds: number;
  fps: number;
  /** x264 preset; 'veryfast' by default, tests use 'ultrafast' */
  preset?: string;
  crf?: number;
}

function substitute(expression: string, duration: number): string {
  const p = `min(t/${duration},1)`;
  const e = `(${p})*(${p})*(3-2*(${p}))`;
  return expression.replace(/\be\b/g, `(${e})`).replace(/\bp\b/g, `(${p})`);
}

export function effectFilterGraph(effect: VideoEffect, aspect: ClipAspectRatio, durationSeconds: number, fps: number): string {
  const motion = MOTIONS[effect];
  if (!motion) throw new Error(`Unknown video effect "${effect}"`);
  const { width: W, height: H } = CLIP_SIZE[aspect];
  const S = sourceSize(aspect);
  const frames = Math.round(durationSeconds * fps);
  const z = substitute(motion.z, durationSeconds);
  const fx = substitute(motion.fx, durationSeconds);
  const fy = substitute(motion.fy, durationSeconds);
  const chain = [
    `color=c=black:s=${W}x${H}:r=${fps}:d=${durationSeconds}[bg]`,
    // the still cover-cropped to the aspect at the source size, once: a no-op for a still already that size
    `[0:v]scale=${S.width}:${S.height}:force_original_aspect_ratio=increase:flags=lanczos,crop=${S.width}:${S.height},` +
      `loop=loop=${frames - 1}:size=1:start=0,setpts=N/(${fps}*TB),` +
      `scale=w='2*trunc(${W}*(${z})/2+1)':h='2*trunc(${H}*(${z})/2+1)':eval=frame:flags=bicubic[fg]`,
    `[bg][fg]overlay=x='(W-w)*(${fx})':y='(H-h)*(${fy})':eval=frame:shortest=1` +
      (motion.eq ? `,eq=${substitute(motion.eq, durationSeconds)}:eval=frame` : '') +
      ',setsar=1,format=yuv420p[v]',
  ];
  return chain.join(';');
}

/** ffmpeg arguments (without the binary) for one clip: H.264 MP4, yuv420p, +faststart, exact frame count. */
export function clipFfmpegArgs(command: ClipCommand): string[] {
  const frames = Math.round(command.durationSeconds * command.fps);
  return [
    '-y',
    '-framerate', String(command.fps),
    '-i', command.source,
    '-filter_complex', effectFilterGraph(command.effect, command.aspectRatio, command.durationSeconds, command.fps),
    '-map', '[v]',
    '-frames:v', String(frames),
    '-r', String(command.fps),
    '-c:v', 'libx264',
    '-preset', command.preset ?? 'veryfast',
    '-crf', String(command.crf ?? 20),
    '-pix_fmt', 'yuv420p',
    '-movflags', '+faststart',
    '-an',
    command.output,
  ];
}
