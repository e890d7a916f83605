import { useMemo, useRef, useState, type DragEvent, type ReactElement } from 'react';
import { PLATFORMS, VIDEO_EFFECTS, type Platform, type VideoEffect } from '../../../../domain/constants';
import { TRY_IT_ACCEPT_TEXT, TRY_IT_MESSAGES } from '../../../../domain/tryIt';
import { Icon } from '../../components/Icon';
import { browserTryItStore, prepareTryItImage } from '../../tryIt/tryItFile';
import { TryItStorageError, type StoredTryItImage } from '../../tryIt/tryItStorage';
import { formatFileSize, platformLabel } from '../../tryIt/tryItText';
import '../../tryIt/tryIt.css';

const EFFECT_HINTS: Record<VideoEffect, string> = {
  'Bring to Life': 'Light and life move through the scene',
  'Walk Through': 'A steady walk into the space',
  'Day to Night': 'Daylight fades into evening',
  'Drone Shot': 'An aerial reveal of the building',
  'Zoom In': 'A slow push towards the building',
  'Pan Left': 'A smooth pan to the left',
  'Pan Right': 'A smooth pan to the right',
};

/**
 * The landing page's try-it area (001 section 2, 000 sections 5 and 9): one image, an effect and a platform, kept
 * in this browser until signup turns them into the first project.
 */
export function TryItSection({ onSignUp }: { onSignUp: () => void }): ReactElement {
  const store = useMemo(browserTryItStore, []);
  const [image, setImage] = useState<StoredTryItImage | null>(() => store.latestImage());
  const [effect, setEffect] = useState<VideoEffect | null>(() => store.selection()?.selectedEffect ?? null);
  const [platform, setPlatform] = useState<Platform | null>(() => store.selection()?.selectedPlatform ?? null);
  const [error, setError] = useState<string | null>(null);
  const [preparing, setPreparing] = useState(false);
  const [dragging, setDragging] = useState(false);
  const input = useRef<HTMLInputElement>(null);

  async function pick(files: FileList | null): Promise<void> {
    const file = files?.[0];
    if (input.current) input.current.value = '';
    if (!file) return;
    setError(null);
    const refused = store.checkPick(file);
    if (refused) {
      setError(refused);
      return;
    }
    setPreparing(true);
    try {
      const saved = store.saveImage(await prepareTryItImage(file));
      // the area holds one image: the new one replaces the one shown
      if (image) store.removeImage(image.id);
      setImage(saved);
    } catch (err) {
      setError(err instanceof TryItStorageError ? err.message : 'We could not read this image. Please choose another one.');
    } finally {
      setPreparing(false);
    }
  }

  function onDrop(event: DragEvent<HTMLDivElement>): void {
    event.preventDefault();
    setDragging(false);
    void pick(event.dataTransfer.files);
  }

  function chooseEffect(value: VideoEffect): void {
    setEffect(value);
    store.saveSelection({ selectedEffect: value });
  }

  function choosePlatform(value: Platform): void {
    setPlatform(value);
    store.saveSelection({ selectedPlatform: value });
  }

  function removeImage(): void {
    if (image) store.removeImage(image.id);
    setImage(null);
    setError(null);
  }

  function clearImages(): void {
    store.clearImages();
    setImage(null);
    setError(null);
  }

  const ready = image !== null && effect !== null && platform !== null;

  return (
    <section id="try-it" className="section section-tinted" aria-labelledby="try-it-title">
      <div className="section-heading">
        <p className="eyebrow">Try it free</p>
        <h2 id="try-it-title">Try it with your own render</h2>
        <p className="section-lede">Pick an image, an effect and a platform. Sign up and your first project is ready with them.</p>
      </div>

      <div className="tryit-grid">
        <div
          className={`tryit-drop${dragging ? ' tryit-drop-active' : ''}`}
          onDragOver={(event) => {
            event.preventDefault();
            setDragging(true);
          }}
          onDragLeave={() => setDragging(false)}
          onDrop={onDrop}
        >
          {image ? (
            <figure className="tryit-preview">
              <img src={image.data} alt={`Preview of ${image.name}`} />
              <figcaption>
                <span className="tryit-file-name">{image.name}</span>
                <span className="muted">{formatFileSize(image.size)}</span>
              </figcaption>
            </figure>
          ) : (
            <div className="tryit-empty">
              <span className="feature-icon" aria-hidden="true">
                <Icon name="upload" size={22} />
              </span>
              <p>Drop your render here</p>
            </div>
          )}
          <div className="tryit-drop-actions">
            <button type="button" className="button button-secondary" disabled={preparing} onClick={() => input.current?.click()}>
              {image ? 'Choose another image' : 'Choose an image'}
            </button>
            {image && (
              <button type="button" className="button button-ghost" onClick={removeImage}>
                Remove image
              </button>
            )}
          </div>
          <input
            ref={input}
            type="file"
            accept="image/*"
            className="visually-hidden"
            aria-label="Try-it image"
            tabIndex={-1}
            onChange={(event) => void pick(event.target.files)}
          />
          <p className="muted tryit-accept">{TRY_IT_ACCEPT_TEXT}</p>
          {preparing && <p role="status">Preparing your image...</p>}
          {error && (
            <div className="form-error" role="alert">
              <p>{error}</p>
              {error === TRY_IT_MESSAGES.maxImages && (
                <button type="button" className="button button-secondary" onClick={clearImages}>
                  Clear images
                </button>
              )}
            </div>
          )}
        </div>

        <div className="tryit-choices">
          <fieldset className="tryit-fieldset">
            <legend>Choose an effect</legend>
            <div className="tryit-options">
              {VIDEO_EFFECTS.map((choice) => (
                <label key={choice} className={`tryit-option${effect === choice ? ' tryit-option-selected' : ''}`}>
                  <input type="radio" name="tryit-effect" value={choice} checked={effect === choice} onChange={() => chooseEffect(choice)} />
                  <span className="tryit-option-title">{choice}</span>
                  <span className="tryit-option-hint">{EFFECT_HINTS[choice]}</span>
                </label>
              ))}
            </div>
          </fieldset>

          <fieldset className="tryit-fieldset">
            <legend>Choose a platform</legend>
            <div className="tryit-options tryit-options-compact">
              {PLATFORMS.map((choice) => (
                <label key={choice} className={`tryit-option${platform === choice ? ' tryit-option-selected' : ''}`}>
                  <input type="radio" name="tryit-platform" value={choice} checked={platform === choice} onChange={() => choosePlatform(choice)} />
                  <span className="tryit-option-title">{platformLabel(choice)}</span>
                </label>
              ))}
            </div>
          </fieldset>

          <button type="button" className="button button-primary button-large" disabled={!ready} onClick={onSignUp}>
            Sign up to create your video
          </button>
          {!ready && <p className="muted">Choose an image, an effect and a platform to continue.</p>}
          {ready && <p className="muted">Your image waits in this browser for 2 hours. Sign up and your first project is ready with it.</p>}
        </div>
      </div>
    </section>
  );
}
