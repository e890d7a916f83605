/** The pickers' view of the shared modes and models table (domain/enhanceRenders.ts): labels and lookups. */
import { ENHANCE_MODEL_OPTIONS, ENHANCE_MODES, SYNC_MODEL_ID, defaultModelFor, modelOption, type EnhanceMode, type EnhanceModelOption } from '../../../../domain/enhanceRenders';

export { SYNC_MODEL_ID, type EnhanceMode, type EnhanceModelOption };

const MODE_LABELS: Record<EnhanceMode, string> = {
  edit_render: 'Edit render',
  style_transfer: 'Style transfer',
  basic_upscale: 'Basic upscale',
  finish_upscale: 'Creative upscale',
  render_enhance: 'Render enhance',
};

export const MODE_CHOICES: ReadonlyArray<{ mode: EnhanceMode; label: string }> = ENHANCE_MODES.map((mode) => ({ mode, label: MODE_LABELS[mode] }));

export function modelsForMode(mode: EnhanceMode): EnhanceModelOption[] {
  return ENHANCE_MODEL_OPTIONS.filter((option) => option.mode === mode);
}

/** The option of `id`, or the first mode's default when the id is unknown (an old saved choice). */
export function modelById(id: string): EnhanceModelOption {
  return modelOption(id) ?? defaultModelFor(ENHANCE_MODES[0]);
}

export { defaultModelFor };
