import { useAtomValue, useSetAtom } from 'jotai';
import { useEffect, useState, type ReactElement } from 'react';
import { setTwoFactorRequired } from '../../api/workspaces';
import { showToastAtom } from '../../atoms/toast';
import { refreshWorkspacesAtom, workspacesStateAtom } from '../../atoms/workspace';
import { useFormSubmit } from '../../components/useFormSubmit';

export const TWO_FACTOR_POLICY_HINT =
  'Members without two-factor sign-in are asked to set it up before they can work in this workspace. Your own account needs it first.';

/** A team workspace's requirement of two-factor sign-in of its members (owners). */
export function TwoFactorPolicyPanel({ workspaceId }: { workspaceId: string }): ReactElement {
  const listed = useAtomValue(workspacesStateAtom);
  const refreshWorkspaces = useSetAtom(refreshWorkspacesAtom);
  const toast = useSetAtom(showToastAtom);
  const current = listed?.ok ? (listed.data.find((w) => w.id === workspaceId)?.twoFactorRequired ?? false) : false;
  const [required, setRequired] = useState(current);
  // another owner's change (a workspace event re-reads the list) shows here
  useEffect(() => setRequired(current), [current]);

  const { busy, error, submit } = useFormSubmit(
    () => setTwoFactorRequired(workspaceId, required),
    (saved) => {
      toast({ kind: 'success', message: saved.twoFactorRequired ? 'Members now need two-factor sign-in.' : 'Two-factor sign-in is no longer required.' });
      refreshWorkspaces();
    },
  );

  return (
    <section className="panel form-panel" aria-labelledby="two-factor-policy-title">
      <h2 id="two-factor-policy-title">Two-factor sign-in</h2>
      <form onSubmit={submit} aria-label="Two-factor sign-in for members">
        <div className="field">
          <label className="checkbox-label">
            <input type="checkbox" name="two-factor-required" checked={required} aria-describedby="two-factor-policy-hint" onChange={(e) => setRequired(e.target.checked)} />
            Require two-factor sign-in for every member
          </label>
          <p id="two-factor-policy-hint" className="field-hint">
            {TWO_FACTOR_POLICY_HINT}
          </p>
        </div>
        {error && (
          <p className="form-error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" className="button button-secondary" disabled={busy || required === current}>
          {busy ? 'Saving...' : 'Save'}
        </button>
      </form>
    </section>
  );
}
