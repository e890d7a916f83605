import { useEffect, useState, type FormEvent, type ReactElement } from 'react';
import {
  DEFAULT_BRAND_PARTS,
  LOGO_CORNERS,
  TITLE_TEXT_MAX_LENGTH,
  brandPartsSummary,
  type BrandPartsSetting,
  type LogoCorner,
  type TitleStyle,
} from '../../../../domain/brandVideo';
import { apiErrorMessage } from '../../api/client';
import { setProjectBrandParts } from '../../api/videoAssembly';
import type { AestheticChatState } from '../../api/videoAssembly';

const FAILED = 'Something went wrong. Please try again.';
const CORNER_LABEL: Record<LogoCorner, string> = { 'top-left': 'Top left', 'top-right': 'Top right', 'bottom-left': 'Bottom left', 'bottom-right': 'Bottom right' };

interface BrandPartsPickerProps {
  projectId: string | null;
  /** whether the workspace has a saved brand kit (null while it loads) */
  kitStored: boolean | null;
  /** the parts the project's edit uses now (the chat's editing config) */
  parts: BrandPartsSetting | null;
  onState: (state: AestheticChatState) => void;
  onOpenBrandKit: () => void;
}

/**
 * The brand parts of the video (issue 44): the workspace's kit is used in full by default; each assembly may switch
 * the title card, brand captions, logo and end card off, and set the title and the logo's corner. Saved per project
 * with the chat's editing config, so the preview and the assembly use them.
 */
export function BrandPartsPicker({ projectId, kitStored, parts, onState, onOpenBrandKit }: BrandPartsPickerProps): ReactElement {
  const current = parts ?? DEFAULT_BRAND_PARTS;
  const [form, setForm] = useState<BrandPartsSetting>(current);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const key = JSON.stringify(current);
  useEffect(() => {
    setForm(current);
    setError(null);
    // the key stands for the setting
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [key]);

  async function onSubmit(event: FormEvent): Promise<void> {
    event.preventDefault();
    if (!projectId) return;
    setBusy(true);
    setError(null);
    try {
      onState(
        await setProjectBrandParts(projectId, {
          titleCard: form.title_card,
          titleText: form.title_text?.trim() ? form.title_text.trim() : null,
          titleStyle: form.title_style,
          captions: form.captions,
          logo: form.logo,
          logoCorner: form.logo_corner,
          endCard: form.end_card,
        }),
      );
    } catch (err) {
      setError(apiErrorMessage(err, FAILED));
    } finally {
      setBusy(false);
    }
  }

  const toggle = (name: 'title_card' | 'captions' | 'logo' | 'end_card', label: string, hint: string): ReactElement => (
    <div className="checkbox-field">
      <input id={`brand-part-${name}`} type="checkbox" checked={form[name]} disabled={busy} onChange={(e) => setForm({ ...form, [name]: e.target.checked })} aria-describedby={`brand-part-${name}-hint`} />
      <label htmlFor={`brand-part-${name}`}>{label}</label>
      <span id={`brand-part-${name}-hint`} className="muted small">
        {hint}
      </span>
    </div>
  );

  return (
    <section className="panel assembly-brand" aria-labelledby="assembly-brand-title">
      <h2 id="assembly-brand-title">Brand parts</h2>
      <p className="muted assembly-brand-now" role="status">
        {kitStored === null ? 'Loading the brand kit...' : brandPartsSummary(current, kitStored)}
      </p>
      {kitStored === false && (
        <p className="muted">
          <button type="button" className="link-button" onClick={onOpenBrandKit}>
            Set up the brand kit
          </button>{' '}
          to add a title card, your logo and an end card to every video.
        </p>
      )}
      {!projectId ? (
        <p className="muted">Choose a project to pick the brand parts of its video.</p>
      ) : (
        <form className="assembly-brand-form" onSubmit={(e) => void onSubmit(e)} aria-label="Brand parts of the video">
          <fieldset className="assembly-brand-switches">
            <legend>Use in this video</legend>
            {toggle('title_card', 'Title card', 'The title over the first clip')}
            {toggle('captions', 'Captions in brand style', "The brand's font and colour")}
            {toggle('logo', 'Logo watermark', 'Your logo in a corner of the clips')}
            {toggle('end_card', 'End card', 'Logo, call to action and contact lines at the end')}
          </fieldset>
          {form.title_card && (
            <div className="assembly-brand-grid">
              <div className="field">
                <label htmlFor="brand-title-text">Title (empty: the project&apos;s name)</label>
                <input
                  id="brand-title-text"
                  type="text"
                  maxLength={TITLE_TEXT_MAX_LENGTH}
                  value={form.title_text ?? ''}
                  onChange={(e) => setForm({ ...form, title_text: e.target.value })}
                />
              </div>
              <div className="field">
                <label htmlFor="brand-title-style">Title style</label>
                <select id="brand-title-style" value={form.title_style} onChange={(e) => setForm({ ...form, title_style: e.target.value as TitleStyle })}>
                  <option value="card">On a brand-coloured card</option>
                  <option value="overlay">Over the first clip</option>
                </select>
              </div>
            </div>
          )}
          {form.logo && (
            <div className="field">
              <label htmlFor="brand-logo-corner">Logo corner</label>
              <select id="brand-logo-corner" value={form.logo_corner} onChange={(e) => setForm({ ...form, logo_corner: e.target.value as LogoCorner })}>
                {LOGO_CORNERS.map((corner) => (
                  <option key={corner} value={corner}>
                    {CORNER_LABEL[corner]}
                  </option>
                ))}
              </select>
            </div>
          )}
          {error && (
            <p className="form-error" role="alert">
              {error}
            </p>
          )}
          <button type="submit" className="button button-secondary" disabled={busy}>
            {busy ? 'Saving...' : 'Use these brand parts'}
          </button>
        </form>
      )}
    </section>
  );
}
