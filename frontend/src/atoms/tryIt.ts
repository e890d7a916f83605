import { atom } from 'jotai';
import type { Platform, VideoEffect } from '../../../domain/constants';
import type { ClipPreset } from '../tryIt/clipPreset';
import { openClipGenerationAtom } from './clipGeneration';
import { openProjectIdAtom } from './project';
import { navigateAtom } from './view';

/** Set by the try-it welcome dialog; the Generate Clip screen starts from it for that render. */
export const clipPresetAtom = atom<ClipPreset | null>(null);

/** The welcome dialog's button: Generate Clip for the try-it render, with the visitor's effect and platform chosen. */
export const openTryItClipAtom = atom(null, (_get, set, to: { projectId: string; renderId: string; effect: VideoEffect | null; platform: Platform | null }) => {
  set(clipPresetAtom, { renderId: to.renderId, effect: to.effect, platform: to.platform });
  set(openClipGenerationAtom, { projectId: to.projectId, source: { kind: 'render', id: to.renderId } });
});

/** After onboarding made the first project: it opens by itself (001 section 2). */
export const openOnboardedProjectAtom = atom(null, (_get, set, projectId: string) => {
  set(navigateAtom, { view: 'projects' });
  set(openProjectIdAtom, projectId);
});
