/** Pure URL rules of the Generate Clip screen; atoms/clipGeneration.ts applies them to window.location. */

/** What the Generate Clip screen makes a clip from: `?render=<id>` or `?image=<id>`, with the project in `?project=`. */
export interface ClipSourceRef {
  kind: 'render' | 'image';
  id: string;
}

const ID = /^[0-9a-f-]{36}$/i;

export function clipSourceFromSearch(search: string): ClipSourceRef | null {
  const params = new URLSearchParams(search);
  const render = params.get('render');
  const image = params.get('image');
  // a clip has one source, never both (spec 000 section 5)
  if (render && image) return null;
  if (render && ID.test(render)) return { kind: 'render', id: render };
  if (image && ID.test(image)) return { kind: 'image', id: image };
  return null;
}

export function projectFromSearch(search: string): string | null {
  const id = new URLSearchParams(search).get('project');
  return id && ID.test(id) ? id : null;
}
