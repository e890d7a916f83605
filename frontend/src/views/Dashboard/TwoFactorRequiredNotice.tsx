import { useAtomValue } from 'jotai';
import { useEffect, useState, type ReactElement } from 'react';
import { workspaceParamAtom } from '../../atoms/view';
import { TWO_FACTOR_REQUIRED_EVENT } from '../../api/client';

/**
 * The workspace's owners require two-factor sign-in and this person has none (a call answered 403
 * TWO_FACTOR_REQUIRED): says so and leads to the set-up on the Security page (in the personal workspace, which never
 * requires it).
 */
export function TwoFactorRequiredNotice(): ReactElement | null {
  const [message, setMessage] = useState<string | null>(null);
  const workspaceId = useAtomValue(workspaceParamAtom);
  // another workspace: its own calls say whether it requires it
  useEffect(() => setMessage(null), [workspaceId]);

  useEffect(() => {
    const show = (event: Event) => setMessage((event as CustomEvent<string>).detail);
    window.addEventListener(TWO_FACTOR_REQUIRED_EVENT, show);
    return () => window.removeEventListener(TWO_FACTOR_REQUIRED_EVENT, show);
  }, []);

  if (!message) return null;
  return (
    <section className="notice-info two-factor-required" aria-label="Two-factor sign-in required" role="alert">
      <p>{message}</p>
      <div className="notice-actions">
        <a className="button button-primary" href="/?view=account&tab=security">
          Set up two-factor sign-in
        </a>
      </div>
    </section>
  );
}
