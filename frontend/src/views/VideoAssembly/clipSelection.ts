/**
 * Pure selection rules of the Video Assembly view (spec 001 sections 4, 5 and 9): at most 5 clips, one aspect
 * family fixed by the first selected clip until the selection is cleared, the order the user gives them, and the
 * platform the family maps to. The orientation of a clip is the domain's rule, shared with the API.
 */
import { arrayMove } from '@dnd-kit/sortable';
import { ASSEMBLY_MSG, ASSEMBLY_OUTPUTS, MAX_ASSEMBLY_CLIPS, cannotMixMessage, platformForOrientation, type AssemblyClip } from '../../../../domain/assembly';
import { clipOrientation, type Orientation } from '../../../../domain/orientation';

export { MAX_ASSEMBLY_CLIPS } from '../../../../domain/assembly';

/** What the orientation rule reads from a listed clip: its file name, its analysis aspectRatio, its aspect_ratio. */
export function orientationOf(clip: Pick<AssemblyClip, 'file_name' | 'analysis_data' | 'aspect_ratio'>): Orientation {
  const analysis = clip.analysis_data?.aspectRatio;
  return clipOrientation({
    fileName: clip.file_name,
    analysisAspectRatio: typeof analysis === 'string' ? analysis : null,
    aspectRatio: clip.aspect_ratio,
  });
}

/** The family of a selection: the first selected clip's, or null when nothing is selected. */
export function selectionFamily(selected: readonly string[], familyOf: (id: string) => Orientation | undefined): Orientation | null {
  for (const id of selected) {
    const family = familyOf(id);
    if (family) return family;
  }
  return null;
}

export interface ToggleResult {
  selected: string[];
  /** the spec's message when the clip could not be added; the selection is then unchanged */
  error: string | null;
}

/**
 * Selects or deselects a clip. A selected clip is removed (the others keep their order); a new one is appended
 * unless 5 are already selected or it is of the other family than the selection's.
 */
export function toggleClip(selected: readonly string[], id: string, familyOf: (id: string) => Orientation | undefined): ToggleResult {
  if (selected.includes(id)) return { selected: selected.filter((s) => s !== id), error: null };
  if (selected.length >= MAX_ASSEMBLY_CLIPS) return { selected: [...selected], error: ASSEMBLY_MSG.maxClips };
  const fixed = selectionFamily(selected, familyOf);
  const attempted = familyOf(id);
  if (fixed && attempted && fixed !== attempted) return { selected: [...selected], error: cannotMixMessage(fixed, attempted) };
  return { selected: [...selected, id], error: null };
}

/** Moves `activeId` to where `overId` is (a drop, or a keyboard move); unknown ids leave the order as it is. */
export function moveClip(selected: readonly string[], activeId: string, overId: string): string[] {
  const from = selected.indexOf(activeId);
  const to = selected.indexOf(overId);
  if (from < 0 || to < 0 || from === to) return [...selected];
  return arrayMove([...selected], from, to);
}

/** The aspect ratio a family is assembled at: its platform's (spec 001 section 9: 9:16 gives tiktok, otherwise youtube). */
export function aspectForFamily(family: Orientation): '9:16' | '16:9' {
  return ASSEMBLY_OUTPUTS[platformForOrientation(family)].aspectRatio;
}

/** What blocks the Assemble Video button, as the spec's message, in the order the user meets them. */
export function assembleBlocker(selected: readonly string[], projectId: string | null): string | null {
  if (selected.length === 0) return ASSEMBLY_MSG.selectClip;
  if (!projectId) return ASSEMBLY_MSG.selectProject;
  return null;
}

/**
 * A selection restored from storage, made valid against the clips listed now: ids that are gone are dropped,
 * duplicates too, and the rules apply again (the first clip's family, at most 5).
 */
export function restoreSelection(saved: readonly string[], clips: ReadonlyMap<string, Orientation>): string[] {
  let selected: string[] = [];
  for (const id of saved) {
    if (!clips.has(id)) continue;
    const next = toggleClip(selected, id, (c) => clips.get(c));
    if (!next.error && next.selected.length > selected.length) selected = next.selected;
  }
  return selected;
}
