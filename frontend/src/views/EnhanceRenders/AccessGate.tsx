import { useState, type FormEvent, type ReactElement } from 'react';
import { ENHANCE_MSG } from '../../../../domain/enhanceRenders';
import { MSG } from '../../../../domain/messages';
import { unlockEnhance } from '../../api/enhanceSet';
import { apiErrorMessage } from '../../api/client';
import { Icon } from '../../components/Icon';
import { BetaBadge } from '../../components/BetaBadge';

/**
 * Said under the field, before any attempt: the spec has a wrong code do nothing and show no message (001 section 5),
 * so the screen says beforehand what an unchanged page means.
 */
export const ACCESS_CODE_HINT = 'The tool opens as soon as the code is accepted. A code that is not accepted leaves this page as it is: check the code you were given and try again.';

/**
 * The locked state (001 sections 2 and 5): Enter or Unlock sends the code to the server, which checks it. The
 * right code opens the tool; a wrong one does nothing and shows no message, as the spec has it (the hint under the
 * field says so). An attempt the server did not check (too many guesses, no code configured, no answer) is said
 * beside the field.
 */
export function AccessGate({ onUnlocked, configured = true }: { onUnlocked: () => void; configured?: boolean }): ReactElement {
  const [code, setCode] = useState('');
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<string | null>(null);

  async function submit(event: FormEvent<HTMLFormElement>): Promise<void> {
    event.preventDefault();
    if (busy || !configured || !code.trim()) return;
    setBusy(true);
    setFailure(null);
    try {
      if (await unlockEnhance(code)) onUnlocked();
    } catch (error) {
      // not a wrong code: the code was not checked (429 too many attempts, a server or network failure)
      setFailure(apiErrorMessage(error, MSG.somethingWentWrong));
    } finally {
      setBusy(false);
    }
  }

  const describedBy = ['enhance-access-hint', failure ? 'enhance-access-failure' : null].filter(Boolean).join(' ');

  return (
    <section className="view enhance-view" aria-labelledby="enhance-title">
      <header className="view-header">
        <h1 id="enhance-title">
          Enhance Renders <BetaBadge />
        </h1>
      </header>
      <form className="panel enhance-lock" aria-label="Unlock Enhance Renders" onSubmit={(e) => void submit(e)} noValidate>
        <span className="empty-icon" aria-hidden="true">
          <Icon name="shield" size={28} />
        </span>
        <h2>Enter your access code</h2>
        <p className="muted">Enhance Renders is in beta. Enter the access code you were given to open it.</p>
        {!configured && (
          <p className="notice-info enhance-lock-unavailable" role="status">
            {ENHANCE_MSG.notConfigured}
          </p>
        )}
        <div className="field">
          <label htmlFor="enhance-access-code">Access code</label>
          <input
            id="enhance-access-code"
            type="password"
            autoComplete="off"
            spellCheck={false}
            value={code}
            maxLength={200}
            disabled={!configured}
            aria-describedby={describedBy}
            aria-invalid={failure ? true : undefined}
            onChange={(e) => setCode(e.target.value)}
          />
          <p id="enhance-access-hint" className="field-hint">
            {ACCESS_CODE_HINT}
          </p>
          {failure && (
            <p id="enhance-access-failure" className="field-error" role="alert">
              {failure}
            </p>
          )}
        </div>
        <button type="submit" className="button button-primary" disabled={busy || !configured}>
          {busy ? 'Checking...' : 'Unlock'}
        </button>
      </form>
    </section>
  );
}
