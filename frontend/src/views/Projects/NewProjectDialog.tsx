import { useSetAtom } from 'jotai';
import { useState, type FormEvent, type ReactElement } from 'react';
import { createProject, type Project } from '../../api/projects';
import { showToastAtom } from '../../atoms/toast';
import { Dialog } from '../../components/Dialog';
import { LoadingState } from '../../components/Spinner';
import { TextField } from '../../components/TextField';
import { isApiHttpError } from '../../api/client';

export const CREATE_PROJECT_FAILED_DATABASE = 'Failed to create project. Please check your database connection.';

/** New Project: name required, address optional (001 section 5). */
export function NewProjectDialog({ onClose, onCreated }: { onClose: () => void; onCreated: (project: Project) => void }): ReactElement {
  const [name, setName] = useState('');
  const [address, setAddress] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const toast = useSetAtom(showToastAtom);

  async function submit(event: FormEvent): Promise<void> {
    event.preventDefault();
    if (!name.trim()) {
      setError('Project name is required');
      return;
    }
    setBusy(true);
    setError(null);
    try {
      onCreated(await createProject({ name: name.trim(), address: address.trim() || undefined }));
    } catch (err) {
      // 001 section 8: the server answered but could not write: the long form names the database connection
      const message = isApiHttpError(err) && err.status >= 500 ? CREATE_PROJECT_FAILED_DATABASE : 'Failed to create project';
      setError(message);
      toast({ kind: 'error', message });
      setBusy(false);
    }
  }

  return (
    <Dialog title="New Project" onClose={onClose}>
      <form className="stack" onSubmit={(e) => void submit(e)} noValidate>
        <TextField label="Project name" value={name} onChange={(e) => setName(e.target.value)} maxLength={200} required error={error === 'Project name is required' ? error : null} />
        <TextField label="Address (optional)" value={address} onChange={(e) => setAddress(e.target.value)} maxLength={500} />
        {error && error !== 'Project name is required' && (
          <p className="form-error" role="alert">
            {error}
          </p>
        )}
        {busy && <LoadingState label="Setting up your project..." />}
        <div className="form-actions">
          <button type="button" className="button button-ghost" onClick={onClose} disabled={busy}>
            Cancel
          </button>
          <button type="submit" className="button button-primary" disabled={busy || !name.trim()}>
            Create Project
          </button>
        </div>
      </form>
    </Dialog>
  );
}
