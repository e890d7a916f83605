/**
 * What the upload benches send: a render just under the upload limit, and the multipart request of
 * POST /api/upload/renders streamed from its file (1 MB windows, as a browser sends a large file).
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import { Readable } from 'node:stream';
import sharp from 'sharp';
import { MAX_UPLOAD_BYTES } from '../../domain/constants';

/** 7200 x 7200 RGB noise, stored without compression: a valid PNG of about 148 MiB (155.6 MB), just under the limit. */
export const BENCH_RENDER_SIDE = 7200;

/** Makes the bench render at `file` once (kept between runs) and answers its size in bytes. */
export async function makeBenchRender(file: string): Promise<number> {
  if (!fs.existsSync(file)) {
    await sharp({ create: { width: BENCH_RENDER_SIDE, height: BENCH_RENDER_SIDE, channels: 3, background: { r: 0, g: 0, b: 0 }, noise: { type: 'gaussian', mean: 128, sigma: 50 } } })
      .png({ compressionLevel: 0 })
      .toFile(file);
  }
  const { size } = fs.statSync(file);
  if (size > MAX_UPLOAD_BYTES) throw new Error(`bench image is ${size} bytes, over the upload limit`);
  return size;
}

/** The fetch options of one upload of `file` (`size` bytes) into `projectId`, its body streamed from disk. */
export function renderUploadRequest(token: string, projectId: string, file: string, size: number): RequestInit {
  const boundary = `----bench${randomUUID()}`;
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="projectId"\r\n\r\n${projectId}\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="bench-${randomUUID()}.png"\r\nContent-Type: image/png\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  async function* body(): AsyncGenerator<Buffer> {
    yield head;
    for await (const chunk of fs.createReadStream(file, { highWaterMark: 1024 * 1024 })) yield chunk as Buffer;
    yield tail;
  }
  return {
    method: 'POST',
    headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': String(head.length + size + tail.length), authorization: `Bearer ${token}` },
    body: Readable.toWeb(Readable.from(body())) as ReadableStream<Uint8Array>,
    duplex: 'half',
  } as RequestInit;
}
