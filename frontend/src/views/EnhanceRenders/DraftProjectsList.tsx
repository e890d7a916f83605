import { useSetAtom } from 'jotai';
import { useCallback, useEffect, useState, type FormEvent, type ReactElement } from 'react';
import { hasStatus } from '../../api/client';
import { commitDraft, createDraft, deleteDraft, fetchDrafts, type DraftSummary } from '../../api/enhanceSet';
import { refreshProjectsAtom } from '../../atoms/project';
import { showToastAtom } from '../../atoms/toast';
import { BetaBadge } from '../../components/BetaBadge';
import { ConfirmDeleteDialog } from '../../components/ConfirmDeleteDialog';
import { Dialog } from '../../components/Dialog';
import { Icon } from '../../components/Icon';
import { LoadingState } from '../../components/Spinner';
import { TextField } from '../../components/TextField';
import { countText } from '../../components/countText';
import { forgetDraftState } from './draftState';
import { BetaNotice } from './BetaNotice';

const DATE_FORMAT = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

interface DraftProjectsListProps {
  onOpen: (draftId: string) => void;
  /** the server no longer knows the unlock (another account on this browser) */
  onLocked: () => void;
  creating: boolean;
  onCreatingChange: (creating: boolean) => void;
}

/**
 * 'Draft Projects' (001 section 2): New Draft, Open Draft, Move to projects and Delete after confirmation. Failures
 * of list, create, commit and delete are silent (section 8): the list simply stays as it was.
 */
export function DraftProjectsList({ onOpen, onLocked, creating, onCreatingChange }: DraftProjectsListProps): ReactElement {
  const [drafts, setDrafts] = useState<DraftSummary[] | null>(null);
  const [moving, setMoving] = useState<DraftSummary | null>(null);
  const [deleting, setDeleting] = useState<DraftSummary | null>(null);
  const refreshProjects = useSetAtom(refreshProjectsAtom);
  const toast = useSetAtom(showToastAtom);

  const load = useCallback(async () => {
    try {
      setDrafts(await fetchDrafts());
    } catch (error) {
      if (hasStatus(error, 403)) onLocked();
      else setDrafts((current) => current ?? []);
    }
  }, [onLocked]);

  useEffect(() => {
    void load();
  }, [load]);

  async function remove(draft: DraftSummary): Promise<void> {
    try {
      await deleteDraft(draft.id);
      forgetDraftState(window.localStorage, draft.id);
    } catch {
      // silent (001 section 8)
    }
    setDeleting(null);
    await load();
  }

  let body: ReactElement;
  if (drafts === null) {
    body = <LoadingState label="Loading drafts..." />;
  } else if (drafts.length === 0) {
    body = (
      <div className="empty-state">
        <span className="empty-icon">
          <Icon name="sparkles" size={28} />
        </span>
        <h2>No drafts yet</h2>
        <p>A draft holds up to 4 renders to edit and upscale before they go into a project.</p>
        <button type="button" className="button button-primary" onClick={() => onCreatingChange(true)}>
          New Draft
        </button>
      </div>
    );
  } else {
    body = (
      <ul className="draft-list" aria-label="Draft Projects">
        {drafts.map((draft) => (
          <li key={draft.id} className="draft-list-item">
            {/* the picture opens the draft too; for keyboards and readers the Open Draft button does */}
            <button type="button" className="draft-list-media" tabIndex={-1} aria-hidden="true" onClick={() => onOpen(draft.id)}>
              {draft.thumbnail_url ? <img src={draft.thumbnail_url} alt="" loading="lazy" /> : <Icon name="layers" size={28} />}
            </button>
            <div className="draft-list-body">
              <h2 className="draft-list-name">{draft.name}</h2>
              <p className="muted draft-list-meta">
                {typeof draft.image_count === 'number' ? `${countText(draft.image_count, 'image')} · ` : ''}
                Updated {DATE_FORMAT.format(new Date(draft.updated_at))}
              </p>
              <div className="draft-list-actions">
                <button type="button" className="button button-primary" onClick={() => onOpen(draft.id)} aria-label={`Open Draft ${draft.name}`}>
                  Open Draft
                </button>
                <button type="button" className="button button-secondary" onClick={() => setMoving(draft)} aria-label={`Move to projects: ${draft.name}`}>
                  Move to projects
                </button>
                <button type="button" className="button button-ghost icon-button-danger" onClick={() => setDeleting(draft)} aria-label={`Delete ${draft.name}`}>
                  <Icon name="trash" size={18} /> Delete
                </button>
              </div>
            </div>
          </li>
        ))}
      </ul>
    );
  }

  return (
    <section className="view enhance-view" aria-labelledby="enhance-title">
      <header className="view-header">
        <h1 id="enhance-title">
          Draft Projects <BetaBadge />
        </h1>
        <div className="header-actions">
          <button type="button" className="button button-primary" onClick={() => onCreatingChange(true)}>
            <Icon name="plus" size={18} /> New Draft
          </button>
        </div>
      </header>
      <BetaNotice />
      {body}
      {creating && (
        <NewDraftDialog
          onClose={() => onCreatingChange(false)}
          onCreated={(id) => {
            onCreatingChange(false);
            onOpen(id);
          }}
        />
      )}
      {moving && (
        <MoveToProjectsDialog
          draft={moving}
          onClose={() => setMoving(null)}
          onMoved={(name) => {
            setMoving(null);
            forgetDraftState(window.localStorage, moving.id);
            refreshProjects();
            toast({ kind: 'success', message: `Moved to projects as "${name}"` });
            void load();
          }}
        />
      )}
      {deleting && (
        <ConfirmDeleteDialog title="Delete draft?" onCancel={() => setDeleting(null)} onConfirm={() => remove(deleting)}>
          Are you sure you want to delete the draft "{deleting.name}"? Its images and their versions will be deleted. This action cannot be undone.
        </ConfirmDeleteDialog>
      )}
    </section>
  );
}

/** New Draft: the name must not be blank; Create is disabled while it is empty or the draft is being created. */
function NewDraftDialog({ onClose, onCreated }: { onClose: () => void; onCreated: (id: string) => void }): ReactElement {
  const [name, setName] = useState('');
  const [busy, setBusy] = useState(false);

  async function submit(event: FormEvent): Promise<void> {
    event.preventDefault();
    if (busy || !name.trim()) return;
    setBusy(true);
    try {
      onCreated(await createDraft(name.trim()));
    } catch {
      // silent (001 section 8): the dialog stays open for another try
      setBusy(false);
    }
  }

  return (
    <Dialog title="New Draft" onClose={onClose}>
      <form className="stack" onSubmit={(e) => void submit(e)} noValidate>
        <TextField label="Draft name" value={name} onChange={(e) => setName(e.target.value)} maxLength={200} required />
        <div className="form-actions">
          <button type="button" className="button button-ghost" onClick={onClose} disabled={busy}>
            Cancel
          </button>
          <button type="submit" className="button button-primary" disabled={busy || !name.trim()}>
            {busy ? 'Creating...' : 'Create'}
          </button>
        </div>
      </form>
    </Dialog>
  );
}

/** Move to projects: a new project (named here, the draft's name by default) gets a copy of each image's current version. */
function MoveToProjectsDialog({ draft, onClose, onMoved }: { draft: DraftSummary; onClose: () => void; onMoved: (name: string) => void }): ReactElement {
  const [name, setName] = useState(draft.name);
  const [busy, setBusy] = useState(false);

  async function submit(event: FormEvent): Promise<void> {
    event.preventDefault();
    if (busy || !name.trim()) return;
    setBusy(true);
    try {
      await commitDraft(draft.id, name.trim());
      onMoved(name.trim());
    } catch {
      // silent (001 section 8)
      setBusy(false);
    }
  }

  return (
    <Dialog title="Move to projects" onClose={onClose}>
      <form className="stack" onSubmit={(e) => void submit(e)} noValidate>
        <p className="muted">A new project is created with the current version of each image as a render. The draft then leaves this list.</p>
        <TextField label="New project name" value={name} onChange={(e) => setName(e.target.value)} maxLength={200} required />
        <div className="form-actions">
          <button type="button" className="button button-ghost" onClick={onClose} disabled={busy}>
            Cancel
          </button>
          <button type="submit" className="button button-primary" disabled={busy || !name.trim()}>
            {busy ? 'Moving...' : 'Move to projects'}
          </button>
        </div>
      </form>
    </Dialog>
  );
}
