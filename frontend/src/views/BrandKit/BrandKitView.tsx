import { useAtomValue } from 'jotai';
import { useCallback, useEffect, useRef, useState, type ReactElement } from 'react';
import {
  BRAND_CALL_TO_ACTION_MAX_LENGTH,
  BRAND_CONTACT_MAX_LENGTH,
  BRAND_FONT_FAMILIES,
  BRAND_LOGO_MAX_BYTES,
  BRAND_KIT_MSG,
  isBrandColor,
  textColorOn,
  type BrandFont,
  type BrandKitFields,
} from '../../../../domain/brandKit';
import { fetchBrandKit, removeBrandLogo, saveBrandKit, uploadBrandLogo, type BrandKitView as Kit } from '../../api/brandKit';
import { apiErrorMessage } from '../../api/client';
import { currentWorkspaceAtom, workspaceAllowsAtom } from '../../atoms/workspace';
import { RoleNote } from '../../components/RoleNote';
import { LoadingState } from '../../components/Spinner';
import { TextField } from '../../components/TextField';
import { SOMETHING_WENT_WRONG, useLoad } from '../../components/useLoad';
import './brandKit.css';

function fieldsOf(kit: Kit): BrandKitFields {
  return { primaryColor: kit.primaryColor, secondaryColor: kit.secondaryColor, font: kit.font, contact: { ...kit.contact }, callToAction: kit.callToAction };
}

/** What new videos look like with the kit: a title card, a clip with the logo and a caption, the end card (9:16). */
function BrandPreview({ fields, logoUrl }: { fields: BrandKitFields; logoUrl: string | null }): ReactElement {
  const primary = isBrandColor(fields.primaryColor) ? fields.primaryColor : '#000000';
  const secondary = isBrandColor(fields.secondaryColor) ? fields.secondaryColor : '#FFFFFF';
  const font = { fontFamily: `'${fields.font}', sans-serif` };
  const contact = [fields.contact.company, fields.contact.phone, fields.contact.website].filter(Boolean);
  return (
    <div className="brand-preview" aria-label="Preview of a video with this brand kit" role="group">
      <figure className="brand-frame-wrap">
        <div className="brand-frame" style={{ background: primary, color: textColorOn(primary), ...font }}>
          <p className="brand-frame-title">Harbour Villas</p>
          <p className="brand-frame-sub" style={{ color: textColorOn(primary) }}>
            {fields.contact.company || 'Your company'}
          </p>
        </div>
        <figcaption>Title card</figcaption>
      </figure>
      <figure className="brand-frame-wrap">
        <div className="brand-frame brand-frame-clip" style={font}>
          {logoUrl && <img className="brand-frame-logo" src={logoUrl} alt="" />}
          <p className="brand-frame-caption" style={{ background: secondary, color: textColorOn(secondary) }}>
            Sea views from every room
          </p>
        </div>
        <figcaption>Logo and captions</figcaption>
      </figure>
      <figure className="brand-frame-wrap">
        <div className="brand-frame" style={{ background: primary, color: textColorOn(primary), ...font }}>
          {logoUrl && <img className="brand-frame-endlogo" src={logoUrl} alt="" />}
          <p className="brand-frame-cta" style={{ background: secondary, color: textColorOn(secondary) }}>
            {fields.callToAction || 'Call to action'}
          </p>
          {contact.map((line) => (
            <p key={line} className="brand-frame-contact">
              {line}
            </p>
          ))}
        </div>
        <figcaption>End card</figcaption>
      </figure>
    </div>
  );
}

/**
 * The workspace's brand kit (issue 44): logo, two colours, font, contact lines and call to action, with a live
 * preview of the title card, the logo over a clip and the end card. Admins and owners edit; everyone else reads.
 */
export function BrandKitView(): ReactElement {
  const workspace = useAtomValue(currentWorkspaceAtom);
  const allows = useAtomValue(workspaceAllowsAtom);
  const workspaceId = workspace?.id ?? null;
  const read = useCallback(() => (workspaceId ? fetchBrandKit(workspaceId) : Promise.reject(new Error(SOMETHING_WENT_WRONG))), [workspaceId]);
  const [state] = useLoad(read);
  const [kit, setKit] = useState<Kit | null>(null);
  const [fields, setFields] = useState<BrandKitFields | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  const fileInput = useRef<HTMLInputElement>(null);
  const mayEdit = allows('brand');

  useEffect(() => {
    if (state.status === 'done') {
      setKit(state.data);
      setFields(fieldsOf(state.data));
    }
  }, [state]);

  if (state.status === 'loading' || (state.status === 'done' && !fields)) return <LoadingState label="Loading brand kit..." />;
  if (state.status === 'error' || !kit || !fields) {
    return (
      <section className="view" aria-labelledby="brand-kit-title">
        <header className="view-header">
          <h1 id="brand-kit-title">Brand kit</h1>
        </header>
        <p className="form-error" role="alert">
          {state.status === 'error' ? state.message : SOMETHING_WENT_WRONG}
        </p>
      </section>
    );
  }

  /** `keepFields`: a logo change leaves what is typed and not saved yet as it is. */
  async function run(action: () => Promise<Kit>, done: string, keepFields = false): Promise<void> {
    setBusy(true);
    setError(null);
    setSaved(null);
    try {
      const next = await action();
      setKit(next);
      if (!keepFields) setFields(fieldsOf(next));
      setSaved(done);
    } catch (err) {
      setError(apiErrorMessage(err, SOMETHING_WENT_WRONG));
    } finally {
      setBusy(false);
    }
  }

  const set = (patch: Partial<BrandKitFields>) => setFields({ ...fields, ...patch });
  const setContact = (patch: Partial<BrandKitFields['contact']>) => setFields({ ...fields, contact: { ...fields.contact, ...patch } });
  const colorsValid = isBrandColor(fields.primaryColor) && isBrandColor(fields.secondaryColor);
  const id = kit.workspaceId;

  return (
    <section className="view brand-kit-view" aria-labelledby="brand-kit-title">
      <header className="view-header">
        <h1 id="brand-kit-title">Brand kit</h1>
        <p className="muted brand-kit-lede">New videos use the workspace&apos;s logo, colours, font and contact lines; each assembly may switch parts off.</p>
      </header>
      {!mayEdit && <RoleNote what="change the brand kit" />}
      <div className="brand-kit-layout">
        <form
          className="panel form-panel brand-kit-form"
          aria-label="Brand kit"
          onSubmit={(e) => {
            e.preventDefault();
            if (mayEdit && colorsValid) void run(() => saveBrandKit(id, fields), 'Brand kit saved.');
          }}
        >
          <fieldset disabled={!mayEdit || busy}>
            <legend className="visually-hidden">Brand kit</legend>
            <div className="brand-logo-row">
              <div className="brand-logo-box">{kit.logoUrl ? <img src={kit.logoUrl} alt="Current logo" /> : <span className="muted">No logo</span>}</div>
              {mayEdit && (
                <div className="brand-logo-actions">
                  <label className="button button-secondary" htmlFor="brand-logo-file">
                    {kit.logoUrl ? 'Replace logo' : 'Upload logo'}
                  </label>
                  <input
                    ref={fileInput}
                    id="brand-logo-file"
                    className="visually-hidden"
                    type="file"
                    accept="image/png,image/jpeg,image/webp,image/svg+xml"
                    onChange={(e) => {
                      const file = e.target.files?.[0];
                      e.target.value = '';
                      if (!file) return;
                      if (file.size > BRAND_LOGO_MAX_BYTES) {
                        setError(BRAND_KIT_MSG.logoTooLarge);
                        return;
                      }
                      void run(() => uploadBrandLogo(id, file), 'Logo saved.', true);
                    }}
                  />
                  {kit.logoUrl && (
                    <button type="button" className="button button-secondary" onClick={() => void run(() => removeBrandLogo(id), 'Logo removed.', true)}>
                      Remove logo
                    </button>
                  )}
                  <p className="field-hint">PNG, JPEG, WebP or SVG, at most 5 MB. Transparent backgrounds are kept.</p>
                </div>
              )}
            </div>
            <div className="brand-colors">
              <div className="field">
                <label htmlFor="brand-primary">Main colour</label>
                <input id="brand-primary" type="color" value={fields.primaryColor.toLowerCase()} onChange={(e) => set({ primaryColor: e.target.value.toUpperCase() })} />
              </div>
              <div className="field">
                <label htmlFor="brand-secondary">Accent colour</label>
                <input id="brand-secondary" type="color" value={fields.secondaryColor.toLowerCase()} onChange={(e) => set({ secondaryColor: e.target.value.toUpperCase() })} />
              </div>
            </div>
            <div className="field">
              <label htmlFor="brand-font">Font</label>
              <select id="brand-font" value={fields.font} onChange={(e) => set({ font: e.target.value as BrandFont })}>
                {BRAND_FONT_FAMILIES.map((family) => (
                  <option key={family} value={family}>
                    {family}
                  </option>
                ))}
              </select>
            </div>
            <TextField label="Company" name="company" maxLength={BRAND_CONTACT_MAX_LENGTH} value={fields.contact.company} onChange={(e) => setContact({ company: e.target.value })} />
            <TextField label="Phone" name="phone" type="tel" maxLength={BRAND_CONTACT_MAX_LENGTH} value={fields.contact.phone} onChange={(e) => setContact({ phone: e.target.value })} />
            <TextField label="Website" name="website" maxLength={BRAND_CONTACT_MAX_LENGTH} value={fields.contact.website} onChange={(e) => setContact({ website: e.target.value })} />
            <TextField
              label="Call to action"
              name="call-to-action"
              maxLength={BRAND_CALL_TO_ACTION_MAX_LENGTH}
              value={fields.callToAction}
              onChange={(e) => set({ callToAction: e.target.value })}
              hint="Shown on the end card."
            />
          </fieldset>
          {error && (
            <p className="form-error" role="alert">
              {error}
            </p>
          )}
          {saved && (
            <p className="brand-kit-saved" role="status">
              {saved}
            </p>
          )}
          {mayEdit && (
            <button type="submit" className="button button-primary" disabled={busy || !colorsValid}>
              {busy ? 'Saving...' : 'Save brand kit'}
            </button>
          )}
        </form>
        <section className="panel brand-kit-preview" aria-labelledby="brand-preview-title">
          <h2 id="brand-preview-title">Preview</h2>
          <BrandPreview fields={fields} logoUrl={kit.logoUrl} />
        </section>
      </div>
    </section>
  );
}
