import { useEffect, useRef, useState, type ReactElement, type RefObject } from 'react';
import { ACCEPT_ATTRIBUTE, dropZoneError } from '../upload/fileChecks';
import type { UploadProgress } from '../upload/uploadQueue';
import { Icon } from './Icon';
import { ProgressBar } from './ProgressBar';
import './UploadZone.css';

const ERROR_BANNER_MS = 5000;

interface UploadZoneProps {
  onFiles: (files: File[]) => void;
  progress: UploadProgress | null;
  /** the file input, so a button elsewhere (Upload Images) can open the picker */
  inputRef?: RefObject<HTMLInputElement | null>;
}

/** Drag-and-drop area with a file picker (000 section 2): checks the files, shows a red banner for 5 s on a problem. */
export function UploadZone({ onFiles, progress, inputRef }: UploadZoneProps): ReactElement {
  const ownInput = useRef<HTMLInputElement>(null);
  const input = inputRef ?? ownInput;
  const [dragging, setDragging] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const busy = progress !== null;

  useEffect(() => {
    if (!error) return;
    const timer = setTimeout(() => setError(null), ERROR_BANNER_MS);
    return () => clearTimeout(timer);
  }, [error]);

  function accept(list: FileList | null): void {
    const files = list ? Array.from(list) : [];
    if (files.length === 0 || busy) return;
    const problem = dropZoneError(files);
    if (problem) {
      setError(problem);
      return;
    }
    setError(null);
    onFiles(files);
  }

  return (
    <div className="upload-zone-wrap">
      <div
        className={`upload-zone${dragging ? ' upload-zone-active' : ''}${busy ? ' upload-zone-busy' : ''}`}
        onDragEnter={(e) => {
          e.preventDefault();
          setDragging(true);
        }}
        onDragOver={(e) => {
          e.preventDefault();
          e.dataTransfer.dropEffect = busy ? 'none' : 'copy';
        }}
        onDragLeave={(e) => {
          if (!e.currentTarget.contains(e.relatedTarget as Node | null)) setDragging(false);
        }}
        onDrop={(e) => {
          e.preventDefault();
          setDragging(false);
          accept(e.dataTransfer.files);
        }}
        onClick={() => !busy && input.current?.click()}
      >
        <span className="upload-zone-icon">
          <Icon name="upload" size={26} />
        </span>
        <p className="upload-zone-title">Drag and drop files here</p>
        <p className="upload-zone-sub">or click to select files</p>
        <button
          type="button"
          className="button button-secondary"
          disabled={busy}
          onClick={(e) => {
            e.stopPropagation();
            input.current?.click();
          }}
        >
          Choose Files
        </button>
        <input
          ref={input}
          type="file"
          multiple
          accept={ACCEPT_ATTRIBUTE}
          className="visually-hidden"
          tabIndex={-1}
          aria-label="Upload render images"
          onChange={(e) => {
            accept(e.currentTarget.files);
            e.currentTarget.value = '';
          }}
        />
      </div>
      {error && (
        <div className="upload-zone-error" role="alert">
          {error}
        </div>
      )}
      {progress && <UploadProgressBar progress={progress} />}
    </div>
  );
}

export function UploadProgressBar({ progress }: { progress: UploadProgress }): ReactElement {
  return (
    <div className="upload-progress" aria-live="polite">
      <div className="upload-progress-text">
        <span>
          {progress.note ? `${progress.note} ` : 'Uploading '}
          {progress.completed}/{progress.total}
          {progress.currentFile ? ` · ${progress.currentFile}` : ''}
        </span>
        <strong>{progress.percent}%</strong>
      </div>
      <ProgressBar label="Upload progress" percent={progress.percent} thin />
    </div>
  );
}
