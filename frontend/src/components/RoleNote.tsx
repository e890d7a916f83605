import { useAtomValue } from 'jotai';
import type { ReactElement } from 'react';
import { ROLE_LABELS } from '../../../domain/workspaceRoles';
import { currentWorkspaceAtom } from '../atoms/workspace';

/**
 * Why controls are missing: the user's role in the current workspace does not allow them (`what`: "upload or
 * generate"). Shown only once the role is known; the server refuses such calls anyway.
 */
export function RoleNote({ what }: { what: string }): ReactElement | null {
  const workspace = useAtomValue(currentWorkspaceAtom);
  if (!workspace?.role) return null;
  return (
    <p className="notice-info role-note" role="note">
      Your role in {workspace.name ?? 'this workspace'} is {ROLE_LABELS[workspace.role]}: you can view and download, but not {what}. Ask an
      admin of the workspace for the Member role.
    </p>
  );
}
