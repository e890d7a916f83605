import { useAtomValue } from 'jotai';
import { useEffect, useState, type ReactElement } from 'react';
import { lastTwoFactorRequiredAnswer, TWO_FACTOR_REQUIRED_EVENT, type TwoFactorRequired } from '../../api/client';
import { workspaceParamAtom } from '../../atoms/view';

/**
 * The workspace's owners require two-factor sign-in and this person has none (a call answered 403
 * TWO_FACTOR_REQUIRED): says so and leads to the set-up on the Security page (in the personal workspace, which never
 * requires it). Shown in the workspace the answer came from only.
 */
export function TwoFactorRequiredNotice(): ReactElement | null {
  const [required, setRequired] = useState<TwoFactorRequired | null>(lastTwoFactorRequiredAnswer);
  const workspaceId = useAtomValue(workspaceParamAtom) ?? null;

  useEffect(() => {
    const show = (event: Event) => setRequired((event as CustomEvent<TwoFactorRequired>).detail);
    window.addEventListener(TWO_FACTOR_REQUIRED_EVENT, show);
    return () => window.removeEventListener(TWO_FACTOR_REQUIRED_EVENT, show);
  }, []);

  if (!required || required.workspaceId !== workspaceId) return null;
  return (
    <section className="notice-info two-factor-required" aria-label="Two-factor sign-in required">
      <p>{required.message}</p>
      <div className="notice-actions">
        <a className="button button-primary" href="/?view=account&tab=security">
          Set up two-factor sign-in
        </a>
      </div>
    </section>
  );
}
