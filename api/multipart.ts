import type { IncomingMessage } from 'node:http';
import busboy from 'busboy';
import type { Readable } from 'node:stream';
import { textInputProblem } from '../domain/textInput';
import { RequestError } from './validation';

export interface MultipartFile {
  stream: Readable;
  fileName: string;
  declaredMime: string;
  requestBytes?: number;
}

export interface SingleFileForm<T> {
  fields: Record<string, string>;
  file: T;
}

const MAX_FIELDS = 20;
const MAX_FIELD_BYTES = 8 * 1024;
/** Buffer window of the parser and the file stream: big enough that a fast upload is not throttled by tiny reads. */
const STREAM_WINDOW_BYTES = 1024 * 1024;

/**
 * Reads a multipart form with one file part named `fileField`, streaming: `onFile` receives the file's stream and
 * the fields seen before it, and must consume the stream (or fail). Resolves once the whole form is read and `onFile`
 * has finished. On any failure the rest of the request is drained to nowhere, so an error answer can go out at once,
 * and a file `onFile` stored anyway is handed to `discard`.
 */
export function readSingleFileForm<T>(
  req: IncomingMessage,
  fileField: string,
  onFile: (file: MultipartFile, fieldsSoFar: Record<string, string>) => Promise<T>,
  discard: (file: T) => Promise<void>,
): Promise<SingleFileForm<T>> {
  return new Promise<SingleFileForm<T>>((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      // browsers send file names as raw UTF-8 (busboy's default reads them as latin1)
      parser = busboy({ headers: req.headers, defParamCharset: 'utf8', highWaterMark: STREAM_WINDOW_BYTES, fileHwm: STREAM_WINDOW_BYTES, limits: { files: 1, fields: MAX_FIELDS, fieldSize: MAX_FIELD_BYTES, parts: MAX_FIELDS + 1 } });
    } catch {
      reject(new RequestError(400, 'Expected a multipart/form-data body', 'VALIDATION_ERROR'));
      return;
    }
    const fields: Record<string, string> = {};
    const lengthHeader = Number(req.headers['content-length']);
    let pending: Promise<T> | null = null;
    let settled = false;
    let activeFile: Readable | null = null;

    const fail = (err: unknown): void => {
      if (settled) return;
      settled = true;
      req.unpipe(parser);
      activeFile?.destroy(err instanceof Error ? err : new Error(String(err)));
      req.resume();
      // a file stored before the form failed is of no use
      pending?.then(discard, () => undefined).catch(() => undefined);
      reject(err);
    };

    parser.on('field', (name: string | undefined, value: string | undefined, info) => {
      // a part without a name (busboy hands it over as undefined) is no field the form can have
      if (typeof name !== 'string' || typeof value !== 'string') {
        fail(new RequestError(400, 'Every form field needs a name', 'VALIDATION_ERROR'));
        return;
      }
      // the text-input rule (api/validation.ts) before any field reaches a service
      const nameProblem = textInputProblem(name, 'single-line');
      const valueProblem = nameProblem ? null : textInputProblem(value, 'single-line');
      if (nameProblem) fail(new RequestError(400, `A form field name ${nameProblem}`, 'VALIDATION_ERROR'));
      else if (valueProblem) fail(new RequestError(400, `Field ${name} ${valueProblem}`, 'VALIDATION_ERROR'));
      else if (info.valueTruncated) fail(new RequestError(400, `Field ${name} is too long`, 'VALIDATION_ERROR'));
      else fields[name] = value;
    });
    parser.on('file', (name, stream, info) => {
      if (name !== fileField || pending) {
        stream.resume();
        return;
      }
      const fileNameProblem = textInputProblem(info.filename ?? '', 'single-line');
      if (fileNameProblem) {
        stream.resume();
        fail(new RequestError(400, `The file name ${fileNameProblem}`, 'VALIDATION_ERROR'));
        return;
      }
      activeFile = stream;
      // its failures reach the caller through onFile's consumer; an unobserved 'error' must not crash the process
      stream.on('error', () => undefined);
      const file: MultipartFile = {
        stream,
        fileName: info.filename ?? '',
        declaredMime: info.mimeType ?? '',
        requestBytes: Number.isFinite(lengthHeader) ? lengthHeader : undefined,
      };
      pending = Promise.resolve({ ...fields }).then((fieldsSoFar) => onFile(file, fieldsSoFar));
      pending.catch(fail);
    });
    parser.on('error', () => fail(new RequestError(400, 'Malformed multipart body', 'VALIDATION_ERROR')));
    parser.on('close', () => {
      if (settled) return;
      if (!pending) {
        fail(new RequestError(400, `No ${fileField} uploaded`, 'VALIDATION_ERROR'));
        return;
      }
      pending.then(
        (file) => {
          if (settled) return;
          settled = true;
          resolve({ fields, file });
        },
        fail,
      );
    });
    req.on('close', () => {
      // the client went away mid-upload: fail the file stream so nothing half-written stays in storage
      if (!req.complete) fail(new RequestError(400, 'Upload aborted', 'UPLOAD_ABORTED'));
    });
    req.pipe(parser);
  });
}
