import { useEffect, useState, type FormEvent, type ReactElement } from 'react';
import {
  DEFAULT_BRAND_PARTS,
  END_CARD_MAX_SECONDS,
  END_CARD_MIN_SECONDS,
  LOGO_CORNERS,
  LOGO_MAX_SIZE,
  LOGO_MIN_OPACITY,
  LOGO_MIN_SIZE,
  TITLE_MAX_SECONDS,
  TITLE_MIN_SECONDS,
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

/** The part settings as the form holds them: the lengths as typed, the logo's size and opacity in percent. */
interface BrandPartsForm extends Omit<BrandPartsSetting, 'title_seconds' | 'end_card_seconds' | 'logo_size' | 'logo_opacity'> {
  title_seconds: string;
  end_card_seconds: string;
  logo_size: number;
  logo_opacity: number;
}

function formOf(parts: BrandPartsSetting): BrandPartsForm {
  return {
    ...parts,
    title_seconds: String(parts.title_seconds),
    end_card_seconds: String(parts.end_card_seconds),
    logo_size: Math.round(parts.logo_size * 100),
    logo_opacity: Math.round(parts.logo_opacity * 100),
  };
}

const LENGTH_MESSAGE = {
  title: `The title card lasts ${TITLE_MIN_SECONDS} to ${TITLE_MAX_SECONDS} seconds`,
  end: `The end card lasts ${END_CARD_MIN_SECONDS} to ${END_CARD_MAX_SECONDS} seconds`,
} as const;

/** A typed length in seconds, or null when it is not a number within `min`-`max`. */
function secondsWithin(text: string, min: number, max: number): number | null {
  const n = Number(text.trim().replace(',', '.'));
  return text.trim() !== '' && Number.isFinite(n) && n >= min && n <= max ? n : null;
}

interface BrandPartsPickerProps {
  projectId: string | null;
  /** whether the workspace has a saved brand kit (null while it loads) */
  kitStored: boolean | null;
  /** the parts the project's edit uses now (the chat's editing config) */
  parts: BrandPartsSetting | null;
  onState: (state: AestheticChatState) => void;
  onOpenBrandKit: () => void;
}

/** A card's length in seconds, with its range as a hint and, when refused, the panel's error beside it. */
function SecondsField(props: { id: string; label: string; min: number; max: number; step: number; value: string; invalid: boolean; onChange: (value: string) => void }): ReactElement {
  const hint = `${props.id}-hint`;
  return (
    <div className="field">
      <label htmlFor={props.id}>{props.label}</label>
      <input
        id={props.id}
        type="number"
        inputMode="decimal"
        min={props.min}
        max={props.max}
        step={props.step}
        value={props.value}
        aria-invalid={props.invalid || undefined}
        aria-describedby={props.invalid ? `${hint} brand-parts-error` : hint}
        onChange={(e) => props.onChange(e.target.value)}
      />
      <p id={hint} className="field-hint">
        {props.min} to {props.max} seconds
      </p>
    </div>
  );
}

/**
 * The brand parts of the video (issue 44): the workspace's kit is used in full by default; each assembly may switch
 * the title card, brand captions, logo and end card off, and set the title and its length, the logo's corner, size
 * and opacity, and the end card's length. Saved per project with the chat's editing config, so the preview and the
 * assembly use them.
 */
export function BrandPartsPicker({ projectId, kitStored, parts, onState, onOpenBrandKit }: BrandPartsPickerProps): ReactElement {
  const current = parts ?? DEFAULT_BRAND_PARTS;
  const [form, setForm] = useState<BrandPartsForm>(() => formOf(current));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [invalid, setInvalid] = useState<{ title: boolean; end: boolean }>({ title: false, end: false });
  const key = JSON.stringify(current);
  useEffect(() => {
    setForm(formOf(current));
    setError(null);
    setInvalid({ title: false, end: false });
    // the key stands for the setting
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [key]);

  async function onSubmit(event: FormEvent): Promise<void> {
    event.preventDefault();
    if (!projectId) return;
    // a length only counts while its part is on; a switched-off part keeps what was stored
    const titleSeconds = form.title_card ? secondsWithin(form.title_seconds, TITLE_MIN_SECONDS, TITLE_MAX_SECONDS) : current.title_seconds;
    const endCardSeconds = form.end_card ? secondsWithin(form.end_card_seconds, END_CARD_MIN_SECONDS, END_CARD_MAX_SECONDS) : current.end_card_seconds;
    const wrong = { title: titleSeconds === null, end: endCardSeconds === null };
    setInvalid(wrong);
    if (wrong.title || wrong.end) {
      setError([wrong.title && LENGTH_MESSAGE.title, wrong.end && LENGTH_MESSAGE.end].filter(Boolean).join('. '));
      document.getElementById(wrong.title ? 'brand-title-seconds' : 'brand-end-card-seconds')?.focus();
      return;
    }
    setBusy(true);
    setError(null);
    try {
      onState(
        await setProjectBrandParts(projectId, {
          titleCard: form.title_card,
          titleText: form.title_text?.trim() ? form.title_text.trim() : null,
          titleStyle: form.title_style,
          titleSeconds: titleSeconds as number,
          captions: form.captions,
          logo: form.logo,
          logoCorner: form.logo_corner,
          logoSize: form.logo_size / 100,
          logoOpacity: form.logo_opacity / 100,
          endCard: form.end_card,
          endCardSeconds: endCardSeconds as number,
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
        <form className="assembly-brand-form" onSubmit={(e) => void onSubmit(e)} aria-label="Brand parts of the video" noValidate>
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
              <SecondsField
                id="brand-title-seconds"
                label="Title length (seconds)"
                min={TITLE_MIN_SECONDS}
                max={TITLE_MAX_SECONDS}
                step={0.1}
                value={form.title_seconds}
                invalid={invalid.title}
                onChange={(title_seconds) => setForm({ ...form, title_seconds })}
              />
            </div>
          )}
          {form.logo && (
            <div className="assembly-brand-grid">
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
              <div className="field">
                <label htmlFor="brand-logo-size">Logo size: {form.logo_size}%</label>
                <input
                  id="brand-logo-size"
                  type="range"
                  min={Math.round(LOGO_MIN_SIZE * 100)}
                  max={Math.round(LOGO_MAX_SIZE * 100)}
                  step={1}
                  value={form.logo_size}
                  aria-valuetext={`${form.logo_size}% of the frame's shorter side`}
                  onChange={(e) => setForm({ ...form, logo_size: Number(e.target.value) })}
                />
              </div>
              <div className="field">
                <label htmlFor="brand-logo-opacity">Logo opacity: {form.logo_opacity}%</label>
                <input
                  id="brand-logo-opacity"
                  type="range"
                  min={Math.round(LOGO_MIN_OPACITY * 100)}
                  max={100}
                  step={5}
                  value={form.logo_opacity}
                  aria-valuetext={`${form.logo_opacity}%`}
                  onChange={(e) => setForm({ ...form, logo_opacity: Number(e.target.value) })}
                />
              </div>
            </div>
          )}
          {form.end_card && (
            <SecondsField
              id="brand-end-card-seconds"
              label="End card length (seconds)"
              min={END_CARD_MIN_SECONDS}
              max={END_CARD_MAX_SECONDS}
              step={0.5}
              value={form.end_card_seconds}
              invalid={invalid.end}
              onChange={(end_card_seconds) => setForm({ ...form, end_card_seconds })}
            />
          )}
          {error && (
            <p id="brand-parts-error" className="form-error" role="alert">
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
