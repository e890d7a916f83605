import { useState, type ReactElement } from 'react';
import { Dialog } from '../../components/Dialog';

const STEPS: ReadonlyArray<{ title: string; body: string }> = [
  { title: 'Welcome to Enhance Renders', body: 'Edit and upscale your renders inside a draft project, then move the draft into a real project when you are happy.' },
  { title: 'Upload your renders', body: 'Drop up to 4 renders into a draft (JPG, PNG, GIF or WEBP). They are kept exactly as you upload them, up to 150 MB.' },
  { title: 'Pick a mode and describe the change', body: 'Select the images to change, choose a mode and a model, then describe the edit in the prompt bar and press Enter.' },
  { title: 'Review every version', body: 'Each run keeps the earlier version. Redo steps back to the previous one; View history shows up to 8 versions to preview and restore.' },
  { title: 'Move to projects', body: 'Move a finished draft to projects: each image becomes a render of a new project. Storage of drafts is not guaranteed in the beta, so download what you want to keep.' },
];

/** The 5-step intro tour (001 section 2): Back, Next, Skip, and Create draft on the last step. */
export function IntroTour({ onClose, onCreateDraft }: { onClose: () => void; onCreateDraft: () => void }): ReactElement {
  const [step, setStep] = useState(0);
  const last = step === STEPS.length - 1;
  const { title, body } = STEPS[step];
  return (
    <Dialog title={title} onClose={onClose}>
      <p className="muted intro-step" aria-live="polite">
        Step {step + 1} of {STEPS.length}
      </p>
      <p>{body}</p>
      <ol className="intro-dots" aria-hidden="true">
        {STEPS.map((s, i) => (
          <li key={s.title} className={i === step ? 'intro-dot-active' : undefined} />
        ))}
      </ol>
      <div className="form-actions intro-actions">
        <button type="button" className="button button-ghost" onClick={onClose}>
          Skip
        </button>
        <button type="button" className="button button-secondary" disabled={step === 0} onClick={() => setStep((s) => Math.max(0, s - 1))}>
          Back
        </button>
        {last ? (
          <button type="button" className="button button-primary" onClick={onCreateDraft}>
            Create draft
          </button>
        ) : (
          <button type="button" className="button button-primary" onClick={() => setStep((s) => s + 1)}>
            Next
          </button>
        )}
      </div>
    </Dialog>
  );
}
