import { createHash, type Hash } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';
import { SIGNATURE_BYTES, sniffFileKind, type SniffedKind } from './fileSignatures';

export interface UploadInspectorOptions {
  maxBytes: number;
  /** Called once with the sniffed kind; an Error refuses the upload before any byte is passed on. */
  accept: (kind: SniffedKind) => Error | null;
  /** The error for an upload that passes `maxBytes`. */
  tooLarge: (bytesSoFar: number) => Error;
  /** How many of the first bytes to keep a copy of (header()), for reading an image's header without reading the file back. */
  keepHeaderBytes?: number;
}

/**
 * A pass-through that looks at an upload while it streams: types it by its first bytes, hashes it (sha256)
 * and counts it, and fails the stream as soon as the type is refused or the size passes the limit.
 * Holds at most the first SIGNATURE_BYTES bytes back and keeps a copy of the first `keepHeaderBytes`; nothing else is
 * buffered beyond the stream's own window.
 */
export class UploadInspector extends Transform {
  readonly detected: Promise<SniffedKind>;
  private bytes = 0;
  private readonly hash: Hash = createHash('sha256');
  private head: Buffer[] = [];
  private headLength = 0;
  private kind: SniffedKind | null = null;
  private readonly kept: Buffer[] = [];
  private keptLength = 0;
  private resolveDetected!: (kind: SniffedKind) => void;
  private rejectDetected!: (err: Error) => void;

  constructor(private readonly options: UploadInspectorOptions) {
    // a 1 MB window each way: large uploads move in few, large steps; memory stays bounded per upload
    super({ highWaterMark: 1024 * 1024 });
    this.detected = new Promise<SniffedKind>((resolve, reject) => {
      this.resolveDetected = resolve;
      this.rejectDetected = reject;
    });
    // a stream that fails before the type is known must settle `detected`, and an unobserved rejection is not a crash
    this.detected.catch(() => undefined);
    this.on('error', (err) => this.rejectDetected(err));
  }

  get size(): number {
    return this.bytes;
  }

  /** A copy of the first `keepHeaderBytes` bytes (all of them for a smaller file). */
  header(): Buffer {
    return Buffer.concat(this.kept, this.keptLength);
  }

  /** Hex sha256 of every byte seen; call after the stream has ended. */
  checksum(): string {
    return this.hash.copy().digest('hex');
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.bytes > this.options.maxBytes) {
      callback(this.options.tooLarge(this.bytes));
      return;
    }
    this.hash.update(chunk);
    const keep = (this.options.keepHeaderBytes ?? 0) - this.keptLength;
    if (keep > 0) {
      const part = chunk.subarray(0, keep);
      this.kept.push(Buffer.from(part));
      this.keptLength += part.length;
    }
    if (this.kind) {
      callback(null, chunk);
      return;
    }
    this.head.push(chunk);
    this.headLength += chunk.length;
    if (this.headLength < SIGNATURE_BYTES) {
      callback();
      return;
    }
    this.decide(callback);
  }

  override _flush(callback: TransformCallback): void {
    if (!this.kind) {
      this.decide(callback);
      return;
    }
    callback();
  }

  private decide(callback: TransformCallback): void {
    const buffered = Buffer.concat(this.head, this.headLength);
    this.head = [];
    const kind = sniffFileKind(buffered);
    const refusal = this.options.accept(kind);
    if (refusal) {
      callback(refusal);
      return;
    }
    this.kind = kind;
    this.resolveDetected(kind);
    callback(null, buffered.length ? buffered : undefined);
  }
}
