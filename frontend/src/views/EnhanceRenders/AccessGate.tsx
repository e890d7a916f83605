import { useState, type FormEvent, type ReactElement } from 'react';
import { unlockEnhance } from '../../api/enhanceSet';
import { Icon } from '../../components/Icon';
import { BetaBadge } from '../../components/BetaBadge';

/**
 * The locked state (001 sections 2 and 5): Enter or Unlock sends the code to the server, which checks it. The
 * right code opens the tool; a wrong one does nothing and shows no message.
 */
export function AccessGate({ onUnlocked }: { onUnlocked: () => void }): ReactElement {
  const [code, setCode] = useState('');
  const [busy, setBusy] = useState(false);

  async function submit(event: FormEvent<HTMLFormElement>): Promise<void> {
    event.preventDefault();
    if (busy || !code.trim()) return;
    setBusy(true);
    try {
      if (await unlockEnhance(code)) onUnlocked();
    } catch {
      // as for a wrong code: nothing to show
    } finally {
      setBusy(false);
    }
  }

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
        <div className="field">
          <label htmlFor="enhance-access-code">Access code</label>
          <input id="enhance-access-code" type="password" autoComplete="off" spellCheck={false} value={code} maxLength={200} onChange={(e) => setCode(e.target.value)} />
        </div>
        <button type="submit" className="button button-primary" disabled={busy}>
          Unlock
        </button>
      </form>
    </section>
  );
}
