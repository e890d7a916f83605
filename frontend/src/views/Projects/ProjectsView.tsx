import { useAtom, useAtomValue, useSetAtom } from 'jotai';
import { useEffect, useState, type ReactElement } from 'react';
import { isApiHttpError } from '../../api/client';
import { deleteProjects, updateProject, type Project } from '../../api/projects';
import { openProjectIdAtom, projectsStateAtom, refreshProjectsAtom } from '../../atoms/project';
import { showToastAtom } from '../../atoms/toast';
import { navigateAtom, unknownViewAtom } from '../../atoms/view';
import { workspaceAllowsAtom } from '../../atoms/workspace';
import { ConfirmDeleteDialog } from '../../components/ConfirmDeleteDialog';
import { Icon } from '../../components/Icon';
import { RoleNote } from '../../components/RoleNote';
import { LoadingState } from '../../components/Spinner';
import { countText, pluralWord } from '../../components/countText';
import { ContentLibraryView } from '../ContentLibrary/ContentLibraryView';
import { NewProjectDialog } from './NewProjectDialog';
import { ProjectCard } from './ProjectCard';
import './projects.css';

/** 001 section 8: the long form when the server answered but could not read its data, the short one otherwise. */
export const LOAD_PROJECTS_FAILED = 'Failed to load projects';
export const LOAD_PROJECTS_FAILED_DATABASE = 'Failed to load projects. Please check your database setup.';

export function loadProjectsFailureText(error: unknown): string {
  return isApiHttpError(error) && error.status >= 500 ? LOAD_PROJECTS_FAILED_DATABASE : LOAD_PROJECTS_FAILED;
}

/** The Projects view: the list of the user's projects, or the Content Library of the open one. */
export function ProjectsView(): ReactElement {
  const openProjectId = useAtomValue(openProjectIdAtom);
  const unknownView = useAtomValue(unknownViewAtom);
  if (unknownView) return <UnknownView name={unknownView} />;
  return openProjectId ? <ContentLibraryView key={openProjectId} projectId={openProjectId} /> : <ProjectsList />;
}

/** `?view=<name>` for a view this app does not have: said plainly, instead of showing Projects as if it were that page. */
function UnknownView({ name }: { name: string }): ReactElement {
  const navigate = useSetAtom(navigateAtom);
  return (
    <section className="view" aria-labelledby="unknown-view-title">
      <div className="panel error-panel unknown-view" role="alert">
        <h1 id="unknown-view-title">Page not found</h1>
        <p>
          There is no page called “{name}” here. It may not be available yet, or the link is mistyped.
        </p>
        <button type="button" className="button button-primary" onClick={() => navigate({ view: 'projects', params: { view: null } })}>
          Go to Projects
        </button>
      </div>
    </section>
  );
}

function ProjectsList(): ReactElement {
  const state = useAtomValue(projectsStateAtom);
  const refresh = useSetAtom(refreshProjectsAtom);
  const [, openProject] = useAtom(openProjectIdAtom);
  const toast = useSetAtom(showToastAtom);
  const [creating, setCreating] = useState(false);
  const [editMode, setEditMode] = useState(false);
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  const [confirmDelete, setConfirmDelete] = useState(false);
  // a viewer sees the workspace's projects but creates, renames and deletes none
  const canEdit = useAtomValue(workspaceAllowsAtom)('edit');

  const projects: Project[] = state?.ok ? state.data : [];
  const loadError = state !== undefined && !state.ok ? state.error : null;

  // shown again, the list re-reads itself unless it was read in the last 5 s (the client cache)
  useEffect(() => refresh({ fresh: false }), [refresh]);

  useEffect(() => {
    if (loadError) toast({ kind: 'error', message: loadProjectsFailureText(loadError) });
  }, [loadError, toast]);

  function toggle(id: string): void {
    setSelected((current) => {
      const next = new Set(current);
      if (next.has(id)) next.delete(id);
      else next.add(id);
      return next;
    });
  }

  function leaveEditMode(): void {
    setEditMode(false);
    setSelected(new Set());
  }

  async function rename(project: Project, name: string): Promise<void> {
    try {
      await updateProject(project.id, { name });
      refresh();
    } catch {
      toast({ kind: 'error', message: 'Failed to update project name' });
    }
  }

  async function removeSelected(): Promise<void> {
    try {
      await deleteProjects([...selected]);
      leaveEditMode();
    } catch {
      toast({ kind: 'error', message: `Failed to delete ${pluralWord(selected.size, 'project')}` });
    } finally {
      setConfirmDelete(false);
      refresh();
    }
  }

  let body: ReactElement;
  if (state === undefined) {
    body = <LoadingState label="Loading projects..." />;
  } else if (!state.ok) {
    body = (
      <div className="panel error-panel" role="alert">
        <p>We couldn't load your projects. Please try again.</p>
        <button type="button" className="button button-primary" onClick={() => refresh()}>
          Retry
        </button>
      </div>
    );
  } else if (projects.length === 0) {
    body = (
      <div className="empty-state">
        <span className="empty-icon">
          <Icon name="folder" size={28} />
        </span>
        <h2>No projects yet</h2>
        <p>Projects hold your renders and everything generated from them.</p>
        {canEdit && (
          <button type="button" className="button button-primary" onClick={() => setCreating(true)}>
            New Project
          </button>
        )}
      </div>
    );
  } else {
    body = (
      <ul className="project-grid" aria-label="Projects">
        {projects.map((project) => (
          <ProjectCard
            key={project.id}
            project={project}
            editMode={editMode}
            selected={selected.has(project.id)}
            onOpen={() => openProject(project.id)}
            onToggle={() => toggle(project.id)}
            onRename={canEdit ? (name) => rename(project, name) : undefined}
          />
        ))}
      </ul>
    );
  }

  return (
    <section className="view projects-view" aria-labelledby="projects-title">
      <header className="view-header">
        <h1 id="projects-title">Projects</h1>
        <div className="header-actions">
          {editMode ? (
            <>
              <span className="muted" aria-live="polite">
                {selected.size} selected
              </span>
              <button type="button" className="button button-danger" disabled={selected.size === 0} onClick={() => setConfirmDelete(true)}>
                <Icon name="trash" size={18} /> Delete Selected
              </button>
              <button type="button" className="button button-ghost" onClick={leaveEditMode}>
                Done
              </button>
            </>
          ) : (
            <>
              {projects.length > 0 && canEdit && (
                <button type="button" className="button button-secondary" onClick={() => setEditMode(true)}>
                  Edit Projects
                </button>
              )}
              {canEdit && (
                <button type="button" className="button button-primary" onClick={() => setCreating(true)}>
                  <Icon name="plus" size={18} /> New Project
                </button>
              )}
            </>
          )}
        </div>
      </header>
      {!canEdit && <RoleNote what="create projects, upload, generate or approve" />}
      {body}
      {creating && (
        <NewProjectDialog
          onClose={() => setCreating(false)}
          onCreated={(project) => {
            setCreating(false);
            refresh();
            openProject(project.id);
          }}
        />
      )}
      {confirmDelete && (
        <ConfirmDeleteDialog title={`Delete ${countText(selected.size, 'project')}?`} onCancel={() => setConfirmDelete(false)} onConfirm={removeSelected}>
          Are you sure you want to delete {selected.size === 1 ? 'this project' : `these ${selected.size} projects`}? All of their renders, images, clips and
          videos will be deleted. This action cannot be undone.
        </ConfirmDeleteDialog>
      )}
    </section>
  );
}
