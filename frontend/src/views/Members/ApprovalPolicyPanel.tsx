import { useAtomValue, useSetAtom } from 'jotai';
import { useEffect, useState, type ReactElement } from 'react';
import { APPROVAL_COUNTS, MAX_NAMED_APPROVERS, policyText, type ApprovalCount, type ApprovalPolicy, type ApprovalPolicyKind } from '../../../../domain/approvalPolicy';
import { roleAllows } from '../../../../domain/workspaceRoles';
import { setApprovalPolicy, type WorkspaceMember } from '../../api/workspaces';
import { showToastAtom } from '../../atoms/toast';
import { refreshWorkspacesAtom, workspacesStateAtom } from '../../atoms/workspace';
import { useFormSubmit } from '../../components/useFormSubmit';

export const APPROVAL_POLICY_HINT = 'Applies to items generated from now on. Items already waiting keep the rule they started with. Any rejection ends an item.';

function samePolicy(a: ApprovalPolicy, b: ApprovalPolicy): boolean {
  if (a.kind !== b.kind) return false;
  if (a.kind === 'count' && b.kind === 'count') return a.count === b.count;
  if (a.kind === 'named' && b.kind === 'named') return a.userIds.length === b.userIds.length && a.userIds.every((id) => b.userIds.includes(id));
  return true;
}

/**
 * Who must approve a generated item before it is saved and charged (owners and admins): any member (the default),
 * 2 or 3 different members, or named members who all must approve.
 */
export function ApprovalPolicyPanel({ workspaceId, members }: { workspaceId: string; members: readonly WorkspaceMember[] }): ReactElement {
  const listed = useAtomValue(workspacesStateAtom);
  const refreshWorkspaces = useSetAtom(refreshWorkspacesAtom);
  const toast = useSetAtom(showToastAtom);
  const current: ApprovalPolicy = (listed?.ok ? listed.data.find((w) => w.id === workspaceId)?.approvalPolicy : undefined) ?? { kind: 'any' };
  const approvers = members.filter((m) => roleAllows(m.role, 'approve'));
  const nameOf = (userId: string) => {
    const member = members.find((m) => m.userId === userId);
    return member ? member.name || member.email : 'a former member';
  };

  const [kind, setKind] = useState<ApprovalPolicyKind>(current.kind);
  const [count, setCount] = useState<ApprovalCount>(current.kind === 'count' ? current.count : 2);
  const [named, setNamed] = useState<string[]>(current.kind === 'named' ? current.userIds : []);
  // another admin's change (a workspace event re-reads the list) shows here
  const currentKey = JSON.stringify(current);
  useEffect(() => {
    setKind(current.kind);
    if (current.kind === 'count') setCount(current.count);
    setNamed(current.kind === 'named' ? current.userIds : []);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [currentKey]);

  const wanted: ApprovalPolicy = kind === 'count' ? { kind, count } : kind === 'named' ? { kind, userIds: named } : { kind: 'any' };
  const problem =
    kind === 'count' && approvers.length < count
      ? `Only ${approvers.length} ${approvers.length === 1 ? 'member' : 'members'} may approve here: invite more first.`
      : kind === 'named' && named.length === 0
        ? 'Choose at least one approver.'
        : kind === 'named' && named.length > MAX_NAMED_APPROVERS
          ? `Choose at most ${MAX_NAMED_APPROVERS} approvers.`
          : null;

  const { busy, error, submit } = useFormSubmit(
    () => setApprovalPolicy(workspaceId, wanted),
    (saved) => {
      toast({ kind: 'success', message: `${policyText(saved.approvalPolicy, nameOf)}. Items already waiting keep their rule.` });
      refreshWorkspaces();
    },
  );

  return (
    <section className="panel form-panel" aria-labelledby="approval-policy-title">
      <h2 id="approval-policy-title">Approvals</h2>
      <form onSubmit={(e) => (problem ? e.preventDefault() : submit(e))} aria-label="Who approves">
        <fieldset className="approval-policy-choices">
          <legend>Who must approve a generated item before it is saved and charged</legend>
          <label className="radio-row">
            <input type="radio" name="approval-policy" value="any" checked={kind === 'any'} onChange={() => setKind('any')} /> Any member may approve
          </label>
          <label className="radio-row">
            <input type="radio" name="approval-policy" value="count" checked={kind === 'count'} onChange={() => setKind('count')} /> Several members
          </label>
          {kind === 'count' && (
            <label className="approval-policy-detail">
              Approvals needed{' '}
              <select value={count} onChange={(e) => setCount(Number(e.target.value) as ApprovalCount)}>
                {APPROVAL_COUNTS.map((n) => (
                  <option key={n} value={n}>
                    {n} different members
                  </option>
                ))}
              </select>
            </label>
          )}
          <label className="radio-row">
            <input type="radio" name="approval-policy" value="named" checked={kind === 'named'} onChange={() => setKind('named')} /> These approvers
          </label>
          {kind === 'named' && (
            <fieldset className="approval-policy-detail approval-policy-people">
              <legend>Each of them must approve</legend>
              {approvers.map((m) => (
                <label key={m.userId} className="checkbox-row">
                  <input
                    type="checkbox"
                    checked={named.includes(m.userId)}
                    onChange={(e) => setNamed((list) => (e.target.checked ? [...list, m.userId] : list.filter((id) => id !== m.userId)))}
                  />{' '}
                  {m.name || m.email}
                </label>
              ))}
            </fieldset>
          )}
        </fieldset>
        <p className="field-hint">{APPROVAL_POLICY_HINT}</p>
        {problem && <p className="field-error">{problem}</p>}
        {error && (
          <p className="form-error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" className="button button-secondary" disabled={busy || problem !== null || samePolicy(wanted, current)}>
          {busy ? 'Saving...' : 'Save approval rule'}
        </button>
      </form>
    </section>
  );
}
