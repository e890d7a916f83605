/**
 * What an MP4 file is, read from its `moov` box in this process: the video track's size, the duration, the frame rate.
 * A hosted clip's download was described by ffprobe, a process of its own whose start-up alone (loading libavcodec and
 * friends) cost about 0.1 s of CPU per clip, more than the rest of reading the answer. For an ordinary MP4 (ISO BMFF:
 * `ftyp`, `moov`, `mdat` in any order) the header says the same; anything else (no `moov`, no video track, sizes or
 * durations missing, a box that runs past the file) gives null and the caller asks ffprobe.
 */
import fs from 'node:fs/promises';
import type { VideoProbe } from './ffmpeg';

/** A `moov` this large is not an ordinary short clip's: left to ffprobe. */
const MOOV_MAX_BYTES = 16 * 1024 * 1024;

/** ffprobe's codec names of the sample entries a hosted model writes. */
const CODECS: Record<string, string> = { avc1: 'h264', avc3: 'h264', hvc1: 'hevc', hev1: 'hevc', av01: 'av1', vp09: 'vp9', mp4v: 'mpeg4' };

interface Box {
  type: string;
  /** payload, without the box header */
  body: Buffer;
}

/** The boxes directly inside `data` (a box's payload); null when one runs past its end. */
function childBoxes(data: Buffer): Box[] | null {
  const boxes: Box[] = [];
  let at = 0;
  while (at + 8 <= data.length) {
    let size = data.readUInt32BE(at);
    const type = data.toString('latin1', at + 4, at + 8);
    let header = 8;
    if (size === 1) {
      if (at + 16 > data.length) return null;
      size = Number(data.readBigUInt64BE(at + 8));
      header = 16;
    } else if (size === 0) {
      size = data.length - at;
    }
    if (size < header || at + size > data.length) return null;
    boxes.push({ type, body: data.subarray(at + header, at + size) });
    at += size;
  }
  return boxes;
}

function child(boxes: Box[] | null, type: string): Box | undefined {
  return boxes?.find((b) => b.type === type);
}

/** The `moov` box's payload, found among the file's top-level boxes by their headers alone. */
async function readMoov(path: string): Promise<Buffer | null> {
  const file = await fs.open(path, 'r');
  try {
    const { size: fileSize } = await file.stat();
    const header = Buffer.alloc(16);
    let at = 0;
    while (at + 8 <= fileSize) {
      const { bytesRead } = await file.read(header, 0, 16, at);
      if (bytesRead < 8) return null;
      let size = header.readUInt32BE(0);
      const type = header.toString('latin1', 4, 8);
      let headerSize = 8;
      if (size === 1) {
        if (bytesRead < 16) return null;
        size = Number(header.readBigUInt64BE(8));
        headerSize = 16;
      } else if (size === 0) {
        size = fileSize - at;
      }
      if (size < headerSize || at + size > fileSize) return null;
      if (type === 'moov') {
        if (size - headerSize > MOOV_MAX_BYTES) return null;
        const moov = Buffer.alloc(size - headerSize);
        const read = await file.read(moov, 0, moov.length, at + headerSize);
        return read.bytesRead === moov.length ? moov : null;
      }
      at += size;
    }
    return null;
  } finally {
    await file.close();
  }
}

/** The video track's figures from `moov`, or null when a part is missing. */
export function probeMoov(moov: Buffer): VideoProbe | null {
  const boxes = childBoxes(moov);
  if (!boxes) return null;
  const mvhd = child(boxes, 'mvhd')?.body;
  for (const trak of boxes.filter((b) => b.type === 'trak')) {
    const inTrak = childBoxes(trak.body);
    const mdia = childBoxes(child(inTrak, 'mdia')?.body ?? Buffer.alloc(0));
    const hdlr = child(mdia, 'hdlr')?.body;
    if (!hdlr || hdlr.length < 12 || hdlr.toString('latin1', 8, 12) !== 'vide') continue;
    const tkhd = child(inTrak, 'tkhd')?.body;
    const mdhd = child(mdia, 'mdhd')?.body;
    const stbl = childBoxes(child(childBoxes(child(mdia, 'minf')?.body ?? Buffer.alloc(0)), 'stbl')?.body ?? Buffer.alloc(0));
    const stsd = child(stbl, 'stsd')?.body;
    const stsz = child(stbl, 'stsz')?.body;
    if (!tkhd || !mdhd || !stsd || !stsz || stsd.length < 16 || stsz.length < 12) return null;
    const tkhdV1 = tkhd[0] === 1;
    const sizeAt = tkhdV1 ? 88 : 76;
    if (tkhd.length < sizeAt + 8) return null;
    const width = Math.round(tkhd.readUInt32BE(sizeAt) / 65536);
    const height = Math.round(tkhd.readUInt32BE(sizeAt + 4) / 65536);
    const mdhdV1 = mdhd[0] === 1;
    if (mdhd.length < (mdhdV1 ? 32 : 20)) return null;
    const timescale = mdhd.readUInt32BE(mdhdV1 ? 20 : 12);
    const trackUnits = mdhdV1 ? Number(mdhd.readBigUInt64BE(24)) : mdhd.readUInt32BE(16);
    const frames = stsz.readUInt32BE(8);
    const codec = CODECS[stsd.toString('latin1', 12, 16)];
    if (!codec || !width || !height || !timescale || !trackUnits || !frames) return null;
    const trackSeconds = trackUnits / timescale;
    // the file's duration as ffprobe's format=duration gives it: the movie header's, else the track's
    let durationSeconds = trackSeconds;
    if (mvhd && mvhd.length >= 20) {
      const v1 = mvhd[0] === 1;
      if (mvhd.length >= (v1 ? 32 : 20)) {
        const scale = mvhd.readUInt32BE(v1 ? 20 : 12);
        const units = v1 ? Number(mvhd.readBigUInt64BE(24)) : mvhd.readUInt32BE(16);
        if (scale && units) durationSeconds = units / scale;
      }
    }
    return { codec, width, height, durationSeconds, fps: frames / trackSeconds, frames, pixelFormat: 'unknown' };
  }
  return null;
}

/** The figures of the MP4 at `path` from its header, or null (not an MP4 this reads: ask ffprobe). */
export async function probeMp4Header(path: string): Promise<VideoProbe | null> {
  try {
    const moov = await readMoov(path);
    return moov ? probeMoov(moov) : null;
  } catch {
    return null;
  }
}
