/** Zoom and pan shared by both sides of a comparison: the same transform on each, so they stay in step. */
export interface ViewTransform {
  zoom: number;
  /** pan in fractions of the frame, from its centre */
  x: number;
  y: number;
}

export const ZOOM_MIN = 1;
export const ZOOM_MAX = 8;
export const IDENTITY: ViewTransform = { zoom: 1, x: 0, y: 0 };

/** Keeps the picture covering the frame: at zoom z the pan may reach (z - 1) / 2 of the frame each way. */
export function clampView(view: ViewTransform): ViewTransform {
  const zoom = Math.min(ZOOM_MAX, Math.max(ZOOM_MIN, view.zoom));
  const reach = (zoom - 1) / 2;
  const clamp = (v: number) => Math.min(reach, Math.max(-reach, v));
  return { zoom, x: clamp(view.x), y: clamp(view.y) };
}

export function zoomBy(view: ViewTransform, factor: number): ViewTransform {
  return clampView({ ...view, zoom: view.zoom * factor });
}

export function panBy(view: ViewTransform, dx: number, dy: number): ViewTransform {
  return clampView({ ...view, x: view.x + dx, y: view.y + dy });
}

/** The CSS transform of one side (translate in % of the element, then scale about its centre). */
export function transformCss(view: ViewTransform): string {
  return `translate(${view.x * 100}%, ${view.y * 100}%) scale(${view.zoom})`;
}

const KIND_LABEL: Record<string, string> = { image: 'AI image', clip: 'clip', compiled_video: 'video', generated: 'item', render: 'render' };

/** "Source render" for the render the chain began with, else "Earlier AI image", "Earlier clip" ... */
export function versionLabel(version: { relation: 'source' | 'earlier'; kind: string }): string {
  if (version.relation === 'source' && version.kind === 'render') return 'Source render';
  return `Earlier ${KIND_LABEL[version.kind] ?? 'version'}`;
}
