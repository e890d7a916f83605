import type { ReactElement } from 'react';

/** The 10 recovery codes, shown this once: the person keeps them somewhere safe. */
export function RecoveryCodesPanel({ codes, onDone }: { codes: string[]; onDone: () => void }): ReactElement {
  return (
    <section className="recovery-codes" aria-labelledby="recovery-codes-heading">
      <h3 id="recovery-codes-heading">Your recovery codes</h3>
      <p>
        Keep these codes somewhere safe, such as a password manager. Each one signs you in once if you lose your authenticator app or passkeys. They are
        shown only now.
      </p>
      <ol className="recovery-code-list" aria-label="Recovery codes">
        {codes.map((code) => (
          <li key={code}>
            <code>{code}</code>
          </li>
        ))}
      </ol>
      <button type="button" className="button button-primary" onClick={onDone}>
        I have saved my recovery codes
      </button>
    </section>
  );
}
