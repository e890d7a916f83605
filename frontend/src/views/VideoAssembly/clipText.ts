import type { AssemblyClip } from '../../api/videoAssembly';

/** What a clip is called on screen: the name the user gave it, else its file name. */
export function clipName(clip: Pick<AssemblyClip, 'custom_name' | 'file_name'>): string {
  return clip.custom_name?.trim() || clip.file_name;
}
