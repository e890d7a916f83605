import { useAtomValue, useSetAtom } from 'jotai';
import { useCallback, useState, type FormEvent, type ReactElement } from 'react';
import { INVITABLE_ROLES, ROLE_LABELS, WORKSPACE_ROLES, roleAllows, type InvitableRole, type WorkspaceRole } from '../../../../domain/workspaceRoles';
import type { User } from '../../api/auth';
import { apiErrorMessage } from '../../api/client';
import {
  changeMemberRole,
  deleteWorkspace,
  fetchInvitations,
  fetchMembers,
  inviteMember,
  removeMember,
  renameWorkspace,
  revokeInvitation,
  transferOwnership,
  type SentInvitation,
  type WorkspaceInvitation,
  type WorkspaceMember,
} from '../../api/workspaces';
import { showToastAtom } from '../../atoms/toast';
import { currentWorkspaceAtom, refreshWorkspacesAtom, switchWorkspaceAtom, workspaceChangesAtom, type CurrentWorkspace } from '../../atoms/workspace';
import { ConfirmDeleteDialog } from '../../components/ConfirmDeleteDialog';
import { LoadingState } from '../../components/Spinner';
import { TextField } from '../../components/TextField';
import { useFormSubmit } from '../../components/useFormSubmit';
import { SOMETHING_WENT_WRONG, useLoad } from '../../components/useLoad';
import { ClipCapPanel } from './ClipCapPanel';
import { ApprovalPolicyPanel } from './ApprovalPolicyPanel';
import { TwoFactorPolicyPanel } from './TwoFactorPolicyPanel';
import { SingleSignOnPanel } from './SingleSignOnPanel';
import './members.css';

const DATE_FORMAT = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' });


function displayName(member: { name: string; email: string }): string {
  return member.name.trim() || member.email;
}

/** An action's error, in the API's words, next to the part it came from. */
function ActionError({ message }: { message: string | null }): ReactElement | null {
  if (!message) return null;
  return (
    <p className="form-error" role="alert">
      {message}
    </p>
  );
}

type Confirm =
  | { kind: 'remove'; member: WorkspaceMember }
  | { kind: 'leave' }
  | { kind: 'transfer'; member: WorkspaceMember }
  | { kind: 'delete' };

/**
 * Members of the current workspace: the list with roles; for admins and owners role changes, removal, the invite
 * form and the pending invitations; leaving for anyone but an owner; transfer, rename and delete for owners.
 */
export function MembersView({ user }: { user: User }): ReactElement {
  const workspace = useAtomValue(currentWorkspaceAtom);
  if (!workspace?.role) return <LoadingState label="Loading members..." />;
  return <Members user={user} workspace={workspace as CurrentWorkspace & { role: WorkspaceRole }} />;
}

function Members({ user, workspace }: { user: User; workspace: CurrentWorkspace & { role: WorkspaceRole } }): ReactElement {
  const refreshWorkspaces = useSetAtom(refreshWorkspacesAtom);
  const switchWorkspace = useSetAtom(switchWorkspaceAtom);
  const toast = useSetAtom(showToastAtom);
  const canManage = roleAllows(workspace.role, 'manageMembers');
  const isOwner = roleAllows(workspace.role, 'own');

  const changes = useAtomValue(workspaceChangesAtom);
  // `changes` (a workspace event from the stream) makes the list read again
  const readMembers = useCallback(() => fetchMembers(workspace.id), [workspace.id, changes]);
  const [members, reloadMembers] = useLoad(readMembers);
  const [confirm, setConfirm] = useState<Confirm | null>(null);
  const [listError, setListError] = useState<string | null>(null);
  const [changing, setChanging] = useState<string | null>(null);

  async function changeRole(member: WorkspaceMember, role: WorkspaceRole) {
    setListError(null);
    setChanging(member.userId);
    try {
      await changeMemberRole(workspace.id, member.userId, role);
      toast({ kind: 'success', message: `${displayName(member)} is now ${ROLE_LABELS[role]}.` });
      refreshWorkspaces();
    } catch (error) {
      setListError(apiErrorMessage(error, SOMETHING_WENT_WRONG));
    } finally {
      setChanging(null);
      await reloadMembers();
    }
  }

  async function confirmed(): Promise<void> {
    if (!confirm) return;
    setListError(null);
    try {
      if (confirm.kind === 'remove') {
        await removeMember(workspace.id, confirm.member.userId);
        toast({ kind: 'success', message: `${displayName(confirm.member)} was removed from ${workspace.name ?? 'the workspace'}.` });
      } else if (confirm.kind === 'transfer') {
        await transferOwnership(workspace.id, confirm.member.userId);
        toast({ kind: 'success', message: `${displayName(confirm.member)} now owns ${workspace.name ?? 'the workspace'}.` });
      } else if (confirm.kind === 'leave') {
        await removeMember(workspace.id, user.id);
        toast({ kind: 'success', message: `You left ${workspace.name ?? 'the workspace'}.` });
        setConfirm(null);
        refreshWorkspaces();
        switchWorkspace(null);
        return;
      } else {
        await deleteWorkspace(workspace.id);
        toast({ kind: 'success', message: `${workspace.name ?? 'The workspace'} was deleted.` });
        setConfirm(null);
        refreshWorkspaces();
        switchWorkspace(null);
        return;
      }
      setConfirm(null);
      refreshWorkspaces();
      await reloadMembers();
    } catch (error) {
      setConfirm(null);
      setListError(apiErrorMessage(error, SOMETHING_WENT_WRONG));
    }
  }

  const others = members.status === 'done' ? members.data.filter((m) => m.userId !== user.id) : [];

  return (
    <section className="view members-view" aria-labelledby="members-title">
      <header className="view-header">
        <div>
          <h1 id="members-title">Members</h1>
          <p className="muted members-lede">
            {workspace.name ?? 'This workspace'} · your role: {ROLE_LABELS[workspace.role]}
          </p>
        </div>
      </header>

      <div className="members-layout">
        <section className="panel" aria-labelledby="member-list-title">
          <h2 id="member-list-title">People in {workspace.name ?? 'this workspace'}</h2>
          <ActionError message={listError} />
          {members.status === 'loading' && <LoadingState label="Loading members..." />}
          {members.status === 'error' && (
            <div role="alert" className="members-message">
              <p>{members.message}</p>
              <button type="button" className="button button-secondary" onClick={() => void reloadMembers()}>
                Try again
              </button>
            </div>
          )}
          {members.status === 'done' && members.data.length === 0 && <p className="muted">No members yet.</p>}
          {members.status === 'done' && members.data.length > 0 && (
            <ul className="member-list" aria-label="Members">
              {members.data.map((member) => {
                const self = member.userId === user.id;
                // only an owner makes or unmakes an owner; nobody changes their own role here
                const editable = canManage && !self && (isOwner || member.role !== 'owner');
                const roles = WORKSPACE_ROLES.filter((r) => isOwner || r !== 'owner');
                return (
                  <li key={member.userId} className="member-row">
                    <div className="member-who">
                      <p className="member-name">
                        {displayName(member)}
                        {self && <span className="muted"> (you)</span>}
                      </p>
                      <p className="member-email">{member.email}</p>
                      <p className="member-joined muted">Joined {DATE_FORMAT.format(new Date(member.joinedAt))}</p>
                    </div>
                    <div className="member-controls">
                      {editable ? (
                        <select
                          className="control member-role"
                          aria-label={`Role of ${displayName(member)}`}
                          value={member.role}
                          disabled={changing === member.userId}
                          onChange={(event) => void changeRole(member, event.target.value as WorkspaceRole)}
                        >
                          {roles.map((r) => (
                            <option key={r} value={r}>
                              {ROLE_LABELS[r]}
                            </option>
                          ))}
                        </select>
                      ) : (
                        <span className={`role-badge role-${member.role}`}>{ROLE_LABELS[member.role]}</span>
                      )}
                      {editable && (
                        <button type="button" className="button button-ghost" onClick={() => setConfirm({ kind: 'remove', member })}>
                          Remove<span className="visually-hidden"> {displayName(member)}</span>
                        </button>
                      )}
                      {self && workspace.role !== 'owner' && (
                        <button type="button" className="button button-ghost" onClick={() => setConfirm({ kind: 'leave' })}>
                          Leave workspace
                        </button>
                      )}
                    </div>
                  </li>
                );
              })}
            </ul>
          )}
        </section>

        {canManage && <InvitePanel workspaceId={workspace.id} />}

        {isOwner && members.status === 'done' && others.length > 0 && (
          <TransferPanel members={others} onTransfer={(member) => setConfirm({ kind: 'transfer', member })} />
        )}

        {roleAllows(workspace.role, 'billing') && !workspace.personal && <ClipCapPanel workspaceId={workspace.id} />}

        {roleAllows(workspace.role, 'billing') && !workspace.personal && members.status === 'done' && <ApprovalPolicyPanel workspaceId={workspace.id} members={members.data} />}

        {isOwner && !workspace.personal && <TwoFactorPolicyPanel workspaceId={workspace.id} />}

        {canManage && !workspace.personal && <SingleSignOnPanel workspaceId={workspace.id} />}

        {isOwner && !workspace.personal && <WorkspaceSettings workspace={workspace} onDelete={() => setConfirm({ kind: 'delete' })} />}
      </div>

      {confirm?.kind === 'remove' && (
        <ConfirmDeleteDialog title="Remove member?" confirmLabel="Remove" busyLabel="Removing..." onCancel={() => setConfirm(null)} onConfirm={confirmed}>
          {displayName(confirm.member)} loses access to {workspace.name ?? 'this workspace'} at once. Their running jobs here are cancelled and
          the credits reserved for them are released.
        </ConfirmDeleteDialog>
      )}
      {confirm?.kind === 'leave' && (
        <ConfirmDeleteDialog title="Leave workspace?" confirmLabel="Leave" busyLabel="Leaving..." onCancel={() => setConfirm(null)} onConfirm={confirmed}>
          You lose access to {workspace.name ?? 'this workspace'} and its projects. An admin can invite you again.
        </ConfirmDeleteDialog>
      )}
      {confirm?.kind === 'transfer' && (
        <ConfirmDeleteDialog title="Transfer ownership?" confirmLabel="Transfer" busyLabel="Transferring..." onCancel={() => setConfirm(null)} onConfirm={confirmed}>
          {displayName(confirm.member)} becomes the owner of {workspace.name ?? 'this workspace'} and you become an admin.
        </ConfirmDeleteDialog>
      )}
      {confirm?.kind === 'delete' && (
        <ConfirmDeleteDialog title="Delete workspace?" onCancel={() => setConfirm(null)} onConfirm={confirmed}>
          {workspace.name ?? 'This workspace'} is deleted with all its projects, content, approvals and credits, for every member. Running jobs
          are cancelled. This cannot be undone.
        </ConfirmDeleteDialog>
      )}
    </section>
  );
}

function InvitePanel({ workspaceId }: { workspaceId: string }): ReactElement {
  const changes = useAtomValue(workspaceChangesAtom);
  // `changes` (a workspace event from the stream) makes the list read again
  const readInvitations = useCallback(() => fetchInvitations(workspaceId), [workspaceId, changes]);
  const [invitations, reloadInvitations] = useLoad(readInvitations);
  const toast = useSetAtom(showToastAtom);
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<InvitableRole>('member');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [sent, setSent] = useState<SentInvitation | null>(null);
  const [revokeError, setRevokeError] = useState<string | null>(null);
  const [revoking, setRevoking] = useState<string | null>(null);

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    setSent(null);
    try {
      const answer = await inviteMember(workspaceId, { email: email.trim(), role });
      setSent(answer);
      setEmail('');
      await reloadInvitations();
    } catch (err) {
      setError(apiErrorMessage(err, SOMETHING_WENT_WRONG));
    } finally {
      setBusy(false);
    }
  }

  async function copyLink(link: string) {
    try {
      await navigator.clipboard.writeText(link);
      toast({ kind: 'success', message: 'Copied to clipboard!' });
    } catch {
      toast({ kind: 'error', message: 'Could not copy: select the link and copy it yourself.' });
    }
  }

  async function revoke(invitation: WorkspaceInvitation) {
    setRevokeError(null);
    setRevoking(invitation.id);
    try {
      await revokeInvitation(workspaceId, invitation.id);
      toast({ kind: 'success', message: `The invitation to ${invitation.email} was revoked.` });
    } catch (err) {
      setRevokeError(apiErrorMessage(err, SOMETHING_WENT_WRONG));
    } finally {
      setRevoking(null);
      await reloadInvitations();
    }
  }

  const pending = invitations.status === 'done' ? invitations.data.filter((i) => i.status === 'pending') : [];

  return (
    <>
      <section className="panel form-panel" aria-labelledby="invite-title">
        <h2 id="invite-title">Invite someone</h2>
        <form className="invite-form" onSubmit={(e) => void submit(e)} aria-label="Invite someone">
          <TextField label="Email" type="email" name="invite-email" autoComplete="off" required value={email} onChange={(e) => setEmail(e.target.value)} />
          <div className="field">
            <label htmlFor="invite-role">Role</label>
            <select id="invite-role" value={role} onChange={(e) => setRole(e.target.value as InvitableRole)}>
              {INVITABLE_ROLES.map((r) => (
                <option key={r} value={r}>
                  {ROLE_LABELS[r]}
                </option>
              ))}
            </select>
          </div>
          <ActionError message={error} />
          <button type="submit" className="button button-primary" disabled={busy || !email.trim()}>
            {busy ? 'Sending...' : 'Send invitation'}
          </button>
        </form>
        {sent && (
          <div className="invite-sent" role="status">
            <p>
              {sent.emailed
                ? `Invitation e-mailed to ${sent.invitation.email}. You can also pass on the link yourself:`
                : `Invitation created for ${sent.invitation.email}. It was not e-mailed: copy the link and send it yourself.`}
            </p>
            <div className="invite-link">
              <TextField label="Invitation link" readOnly value={sent.link} onFocus={(e) => e.currentTarget.select()} hint="Valid for 7 days, for that e-mail address only." />
              <button type="button" className="button button-secondary" onClick={() => void copyLink(sent.link)}>
                Copy link
              </button>
            </div>
          </div>
        )}
      </section>

      <section className="panel" aria-labelledby="pending-invitations-title">
        <h2 id="pending-invitations-title">Pending invitations</h2>
        <ActionError message={revokeError} />
        {invitations.status === 'loading' && <LoadingState label="Loading invitations..." />}
        {invitations.status === 'error' && (
          <div role="alert" className="members-message">
            <p>{invitations.message}</p>
            <button type="button" className="button button-secondary" onClick={() => void reloadInvitations()}>
              Try again
            </button>
          </div>
        )}
        {invitations.status === 'done' && pending.length === 0 && <p className="muted">No pending invitations.</p>}
        {pending.length > 0 && (
          <ul className="member-list" aria-label="Pending invitations">
            {pending.map((invitation) => (
              <li key={invitation.id} className="member-row">
                <div className="member-who">
                  <p className="member-name">{invitation.email}</p>
                  <p className="member-email">
                    {ROLE_LABELS[invitation.role]}
                    {invitation.invitedBy ? ` · invited by ${displayName(invitation.invitedBy)}` : ''}
                  </p>
                  <p className="member-joined muted">Expires {DATE_FORMAT.format(new Date(invitation.expiresAt))}</p>
                </div>
                <div className="member-controls">
                  <button type="button" className="button button-ghost" disabled={revoking === invitation.id} onClick={() => void revoke(invitation)}>
                    {revoking === invitation.id ? 'Revoking...' : 'Revoke'}
                    <span className="visually-hidden"> the invitation to {invitation.email}</span>
                  </button>
                </div>
              </li>
            ))}
          </ul>
        )}
      </section>
    </>
  );
}

function TransferPanel({ members, onTransfer }: { members: WorkspaceMember[]; onTransfer: (member: WorkspaceMember) => void }): ReactElement {
  const [target, setTarget] = useState(members[0]?.userId ?? '');
  const chosen = members.find((m) => m.userId === target) ?? members[0];
  return (
    <section className="panel form-panel" aria-labelledby="transfer-title">
      <h2 id="transfer-title">Transfer ownership</h2>
      <p className="muted">The new owner can rename, delete and transfer the workspace; you stay as an admin.</p>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          if (chosen) onTransfer(chosen);
        }}
        aria-label="Transfer ownership"
      >
        <div className="field">
          <label htmlFor="transfer-to">New owner</label>
          <select id="transfer-to" value={chosen?.userId ?? ''} onChange={(e) => setTarget(e.target.value)}>
            {members.map((m) => (
              <option key={m.userId} value={m.userId}>
                {displayName(m)} ({m.email})
              </option>
            ))}
          </select>
        </div>
        <button type="submit" className="button button-secondary" disabled={!chosen}>
          Transfer ownership
        </button>
      </form>
    </section>
  );
}

function WorkspaceSettings({ workspace, onDelete }: { workspace: CurrentWorkspace; onDelete: () => void }): ReactElement {
  const refreshWorkspaces = useSetAtom(refreshWorkspacesAtom);
  const toast = useSetAtom(showToastAtom);
  const [name, setName] = useState(workspace.name ?? '');
  const { busy, error, submit } = useFormSubmit(
    () => renameWorkspace(workspace.id, name.trim()),
    (renamed) => {
      toast({ kind: 'success', message: `Renamed to ${renamed.name}.` });
      refreshWorkspaces();
    },
  );

  return (
    <section className="panel form-panel" aria-labelledby="workspace-settings-title">
      <h2 id="workspace-settings-title">Workspace</h2>
      <form onSubmit={submit} aria-label="Rename workspace">
        <TextField label="Workspace name" name="workspace-name" required maxLength={100} value={name} onChange={(e) => setName(e.target.value)} />
        <ActionError message={error} />
        <button type="submit" className="button button-secondary" disabled={busy || !name.trim() || name.trim() === workspace.name}>
          {busy ? 'Renaming...' : 'Rename'}
        </button>
      </form>
      <div className="danger-zone">
        <p className="muted">Deleting removes the workspace's projects, content and credits for every member.</p>
        <button type="button" className="button button-danger" onClick={onDelete}>
          Delete workspace
        </button>
      </div>
    </section>
  );
}
