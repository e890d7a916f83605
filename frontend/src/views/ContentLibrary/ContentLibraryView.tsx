import { useAtomValue, useSetAtom } from 'jotai';
import { useCallback, useEffect, useMemo, useRef, useState, type ReactElement } from 'react';
import { apiErrorMessage } from '../../api/client';
import { CONTENT_REFRESH_EVENT, deleteContentItem, fetchProject, renameContentItem, type ContentItem, type Project } from '../../api/projects';
import { openClipGenerationAtom } from '../../atoms/clipGeneration';
import { openImageEditorAtom } from '../../atoms/imageGeneration';
import { openVideoAssemblyAtom } from '../../atoms/videoAssembly';
import { openProjectIdAtom, projectContentStateAtom, refreshProjectContentAtom, refreshProjectsAtom } from '../../atoms/project';
import { showToastAtom } from '../../atoms/toast';
import { workspaceAllowsAtom } from '../../atoms/workspace';
import { ConfirmDeleteDialog } from '../../components/ConfirmDeleteDialog';
import { Icon } from '../../components/Icon';
import { RoleNote } from '../../components/RoleNote';
import { LoadingState } from '../../components/Spinner';
import { UploadReportPanel } from '../../components/UploadReportPanel';
import { UploadZone } from '../../components/UploadZone';
import { useRenderUpload } from '../../upload/useRenderUpload';
import { UnfinishedUploads } from './UnfinishedUploads';
import { AssembledVideoDialog } from './AssembledVideoDialog';
import { ItemPreviewDialog } from './ItemPreviewDialog';
import { LibraryGrid } from './LibraryGrid';
import { LibraryItemCard } from './LibraryItemCard';
import { TryItWelcomeDialog } from './TryItWelcomeDialog';
import { downloadFile } from './download';
import { EAGER_THUMBNAILS, LIBRARY_TABS, TAB_LABEL, deleteTexts, downloadName, itemKey, itemsForTab, libraryCounts, tabAllowsUpload, type LibraryTab } from './libraryItems';
import './library.css';
import { countText } from '../../components/countText';

const EMPTY_TEXT: Record<LibraryTab, { title: string; hint: string }> = {
  all: { title: 'No content yet', hint: 'Upload renders to get started. Images, clips and videos you create will appear here.' },
  renders: { title: 'No renders yet', hint: 'Upload JPG, PNG, GIF or WEBP renders up to 150MB.' },
  images: { title: 'No AI images yet', hint: 'AI images you approve are saved here.' },
  clips: { title: 'No clips yet', hint: 'Video clips you approve are saved here.' },
  videos: { title: 'No videos yet', hint: 'Assembled videos you approve are saved here.' },
};

/** `?bust=` in the address asks for a fresh read once; it is then removed from the address (000 section 2). */
function takeBustParameter(): boolean {
  const url = new URL(window.location.href);
  if (!url.searchParams.has('bust')) return false;
  url.searchParams.delete('bust');
  window.history.replaceState(window.history.state, '', `${url.pathname}${url.search}${url.hash}`);
  return true;
}

/** Project detail: header with counts, tabs, upload area and the masonry grid of the project's content. */
export function ContentLibraryView({ projectId }: { projectId: string }): ReactElement {
  const state = useAtomValue(projectContentStateAtom);
  const refreshContent = useSetAtom(refreshProjectContentAtom);
  const refreshProjects = useSetAtom(refreshProjectsAtom);
  const openProject = useSetAtom(openProjectIdAtom);
  const openClipGeneration = useSetAtom(openClipGenerationAtom);
  const openImageEditor = useSetAtom(openImageEditorAtom);
  const openVideoAssembly = useSetAtom(openVideoAssemblyAtom);
  const toast = useSetAtom(showToastAtom);
  const [project, setProject] = useState<Project | null>(null);
  const [projectError, setProjectError] = useState<string | null>(null);
  const [tab, setTab] = useState<LibraryTab>('all');
  const [opened, setOpened] = useState<ContentItem | null>(null);
  const [deleting, setDeleting] = useState<ContentItem | null>(null);
  const fileInput = useRef<HTMLInputElement>(null);
  // a viewer reads and downloads: no upload, edit, generate or assemble controls (the server refuses them anyway)
  const allows = useAtomValue(workspaceAllowsAtom);
  const canEdit = allows('edit');
  const canGenerate = allows('generate');
  const canAssemble = allows('assemble');

  useEffect(() => {
    let live = true;
    fetchProject(projectId).then(
      (p) => live && setProject(p),
      (err: unknown) => live && setProjectError(apiErrorMessage(err, 'Something went wrong. Please try again.')),
    );
    return () => {
      live = false;
    };
  }, [projectId]);

  useEffect(() => {
    refreshContent({ fresh: takeBustParameter() });
    const onRefresh = (event: Event) => {
      const target = (event as CustomEvent<{ projectId?: string }>).detail?.projectId;
      if (!target || target === projectId) refreshContent({ fresh: true });
    };
    window.addEventListener(CONTENT_REFRESH_EVENT, onRefresh);
    return () => window.removeEventListener(CONTENT_REFRESH_EVENT, onRefresh);
  }, [projectId, refreshContent]);

  const onUploaded = useCallback(() => {
    refreshContent({ fresh: true });
    refreshProjects();
  }, [refreshContent, refreshProjects]);
  const { progress, upload, report: uploadReport, dismissReport, runs: uploadRuns } = useRenderUpload(projectId, onUploaded);

  // the tiles' actions stay the same functions across renders (the memoised tiles are not drawn again for them)
  const latest = useRef({ download, rename });
  latest.current = { download, rename };
  const onDownloadTile = useCallback((item: ContentItem) => void latest.current.download(item), []);
  const onRenameTile = useCallback((item: ContentItem, name: string) => latest.current.rename(item, name), []);

  const current = state?.ok && state.data.projectId === projectId ? state.data : null;
  const items = current?.items ?? [];
  const counts = libraryCounts(items);
  const visible = useMemo(() => itemsForTab(items, tab), [items, tab]);

  async function download(item: ContentItem, failure = 'Failed to download file'): Promise<void> {
    if (!item.signed_url) {
      toast({ kind: 'error', message: failure });
      return;
    }
    toast({ kind: 'info', message: 'Download started' });
    try {
      await downloadFile(item.signed_url, downloadName(item));
    } catch {
      toast({ kind: 'error', message: failure });
    }
  }

  async function remove(item: ContentItem): Promise<void> {
    const texts = deleteTexts(item);
    try {
      await deleteContentItem(projectId, item);
      toast({ kind: 'success', message: texts.success });
      setOpened(null);
      refreshContent({ fresh: true });
      if (item.type === 'render') refreshProjects();
    } catch {
      toast({ kind: 'error', message: texts.failure });
    } finally {
      setDeleting(null);
    }
  }

  async function rename(item: ContentItem, name: string): Promise<void> {
    try {
      await renameContentItem(projectId, item, name);
      toast({ kind: 'success', message: 'Saved successfully!' });
      refreshContent({ fresh: true });
    } catch (err) {
      toast({ kind: 'error', message: apiErrorMessage(err, 'Something went wrong. Please try again.') });
    }
  }

  if (projectError) {
    return (
      <section className="view library-view">
        <button type="button" className="link-button back-link" onClick={() => openProject(null)}>
          <Icon name="arrowLeft" size={18} /> Back to Projects
        </button>
        <div className="panel error-panel" role="alert">
          <p>Failed to load project data: {projectError}</p>
        </div>
      </section>
    );
  }

  let body: ReactElement;
  if (!current && (state === undefined || state.ok)) {
    body = <LoadingState label="Loading content..." />;
  } else if (state && !state.ok) {
    body = (
      <div className="panel error-panel" role="alert">
        <p>Failed to load project content: {apiErrorMessage(state.error, 'Something went wrong. Please try again.')}</p>
        <button type="button" className="button button-primary" onClick={() => refreshContent({ fresh: true })}>
          Retry
        </button>
      </div>
    );
  } else if (visible.length === 0) {
    body = (
      <div className="empty-state">
        <span className="empty-icon">
          <Icon name={tab === 'clips' || tab === 'videos' ? 'film' : 'layers'} size={28} />
        </span>
        <h2>{EMPTY_TEXT[tab].title}</h2>
        <p>{EMPTY_TEXT[tab].hint}</p>
      </div>
    );
  } else {
    body = (
      <LibraryGrid
        items={visible}
        renderItem={(item, placement) => (
          <LibraryItemCard
            key={itemKey(item)}
            item={item}
            {...placement}
            eager={placement.index < EAGER_THUMBNAILS}
            onOpen={setOpened}
            onDownload={onDownloadTile}
            onDelete={setDeleting}
            onRename={onRenameTile}
            readOnly={!canEdit}
          />
        )}
      />
    );
  }

  return (
    <section className="view library-view" aria-labelledby="library-title">
      <button type="button" className="link-button back-link" onClick={() => openProject(null)}>
        <Icon name="arrowLeft" size={18} /> Back to Projects
      </button>
      <header className="view-header library-header">
        <div>
          <h1 id="library-title">{project?.name ?? 'Project'}</h1>
          {project?.address && <p className="muted library-address">{project.address}</p>}
          <p className="library-counts" aria-label="Content counts">
            <span>{countText(counts.renders, 'render')}</span>
            <span>{countText(counts.clips, 'clip')}</span>
            <span>{countText(counts.videos, 'video')}</span>
            <span>{countText(counts.images, 'image')}</span>
          </p>
        </div>
        <div className="library-header-actions">
          {counts.clips > 0 && canAssemble && (
            <button type="button" className="button button-secondary" onClick={() => openVideoAssembly(projectId)}>
              <Icon name="film" size={18} /> Assemble Video
            </button>
          )}
          {tabAllowsUpload(tab) && canEdit && (
            <button type="button" className="button button-primary" disabled={progress !== null} onClick={() => fileInput.current?.click()}>
              <Icon name="upload" size={18} /> Upload Images
            </button>
          )}
        </div>
      </header>

      <div className="tabs" role="tablist" aria-label="Filter content">
        {LIBRARY_TABS.map((t) => (
          <button key={t} type="button" role="tab" className="tab" aria-selected={tab === t} onClick={() => setTab(t)}>
            {TAB_LABEL[t]}
          </button>
        ))}
      </div>

      {tabAllowsUpload(tab) && canEdit && <UploadZone onFiles={(files) => void upload(files)} progress={progress} inputRef={fileInput} />}
      {!canEdit && <RoleNote what="upload, generate, approve or assemble" />}
      <UnfinishedUploads projectId={projectId} version={uploadRuns} canEdit={canEdit} onPickFile={() => fileInput.current?.click()} />
      {uploadReport && (
        <UploadReportPanel
          report={uploadReport}
          // the library's own copy of the item when it has one (it may have been renamed since)
          onOpenItem={(item) => setOpened(items.find((i) => i.type === item.type && i.data.id === item.data.id) ?? item)}
          onDismiss={dismissReport}
        />
      )}

      {body}

      {opened && opened.type === 'compiled_video' && (
        <AssembledVideoDialog
          item={opened}
          onClose={() => setOpened(null)}
          onDownload={() => void download(opened, 'Failed to download content')}
          onDelete={canEdit ? () => setDeleting(opened) : undefined}
        />
      )}
      {opened && opened.type !== 'compiled_video' && (
        <ItemPreviewDialog
          item={opened}
          onClose={() => setOpened(null)}
          onDownload={() => void download(opened)}
          onDelete={canEdit ? () => setDeleting(opened) : undefined}
          onOpenLineage={(node) => {
            // a step in this project opens its dialog here; one in another project opens that project
            const here = items.find((i) => i.data.id === node.id);
            if (here) setOpened(here);
            else if (node.project_id && node.project_id !== projectId) {
              setOpened(null);
              openProject(node.project_id);
            }
          }}
          onGenerateClip={
            canGenerate && (opened.type === 'render' || opened.source === 'images')
              ? () => openClipGeneration({ projectId, source: { kind: opened.type === 'render' ? 'render' : 'image', id: opened.data.id } })
              : undefined
          }
          onEditImage={
            canGenerate && (opened.type === 'render' || opened.source === 'images')
              ? () => openImageEditor({ projectId, source: { kind: opened.type === 'render' ? 'render' : 'image', id: opened.data.id } })
              : undefined
          }
        />
      )}
      <TryItWelcomeDialog projectId={projectId} projectName={project?.name ?? null} />
      {deleting && (
        <ConfirmDeleteDialog title="Confirm delete" onCancel={() => setDeleting(null)} onConfirm={() => remove(deleting)}>
          {deleteTexts(deleting).confirm}
        </ConfirmDeleteDialog>
      )}
    </section>
  );
}
