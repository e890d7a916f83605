import { useRef, type KeyboardEvent, type ReactElement } from 'react';
import type { AuthTab } from '../../atoms/viewUrl';
import { Dialog } from '../../components/Dialog';
import { SignInForm } from './SignInForm';
import { SsoSignInButtons } from './SsoSignInButtons';
import { SignUpForm } from './SignUpForm';

const TABS: { id: AuthTab; label: string }[] = [
  { id: 'signin', label: 'Sign in' },
  { id: 'signup', label: 'Sign up' },
];

interface AuthDialogProps {
  tab: AuthTab;
  onTabChange: (tab: AuthTab) => void;
  onClose: () => void;
  onAuthenticated: () => void;
  /** prefills both forms' e-mail (the invited address) */
  email?: string;
}

/** Sign-in and sign-up in one dialog with two tabs (WAI-ARIA tabs: arrow keys move between them). */
export function AuthDialog({ tab, onTabChange, onClose, onAuthenticated, email }: AuthDialogProps): ReactElement {
  const tabRefs = useRef<Record<AuthTab, HTMLButtonElement | null>>({ signin: null, signup: null });

  function onTabKeyDown(event: KeyboardEvent<HTMLButtonElement>) {
    if (event.key !== 'ArrowLeft' && event.key !== 'ArrowRight') return;
    const next: AuthTab = tab === 'signin' ? 'signup' : 'signin';
    onTabChange(next);
    tabRefs.current[next]?.focus();
  }

  return (
    <Dialog title={tab === 'signin' ? 'Welcome back' : 'Create your account'} onClose={onClose} className="auth-dialog">
      <div className="tabs tabs-equal" role="tablist" aria-label="Sign in or sign up">
        {TABS.map((t) => (
          <button
            key={t.id}
            ref={(el) => {
              tabRefs.current[t.id] = el;
            }}
            type="button"
            role="tab"
            id={`auth-tab-${t.id}`}
            aria-selected={tab === t.id}
            aria-controls={`auth-panel-${t.id}`}
            tabIndex={tab === t.id ? 0 : -1}
            className="tab"
            onClick={() => onTabChange(t.id)}
            onKeyDown={onTabKeyDown}
          >
            {t.label}
          </button>
        ))}
      </div>
      <div role="tabpanel" id={`auth-panel-${tab}`} aria-labelledby={`auth-tab-${tab}`}>
        {tab === 'signin' ? <SignInForm onSignedIn={onAuthenticated} initialEmail={email} /> : <SignUpForm onSignedUp={onAuthenticated} initialEmail={email} />}
        {tab === 'signin' && <SsoSignInButtons />}
      </div>
    </Dialog>
  );
}
