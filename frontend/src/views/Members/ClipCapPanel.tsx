import { useAtomValue, useSetAtom } from 'jotai';
import { useEffect, useState, type ReactElement } from 'react';
import { MAX_CLIPS_IN_FLIGHT_CAP } from '../../../../domain/clipGeneration';
import { setClipCap } from '../../api/workspaces';
import { showToastAtom } from '../../atoms/toast';
import { refreshWorkspacesAtom, workspacesStateAtom } from '../../atoms/workspace';
import { TextField } from '../../components/TextField';
import { useFormSubmit } from '../../components/useFormSubmit';

export const CLIP_CAP_HINT = `Each member runs one clip at a time. Leave empty for no workspace limit, or enter 1 to ${MAX_CLIPS_IN_FLIGHT_CAP}; running clips are never stopped.`;

/**
 * A team workspace's cap on clips in flight (owners and admins, who manage its spending): how many clips its
 * members may have pending or processing together. Empty: no cap beyond the credits.
 */
export function ClipCapPanel({ workspaceId }: { workspaceId: string }): ReactElement {
  const listed = useAtomValue(workspacesStateAtom);
  const refreshWorkspaces = useSetAtom(refreshWorkspacesAtom);
  const toast = useSetAtom(showToastAtom);
  const current = listed?.ok ? (listed.data.find((w) => w.id === workspaceId)?.maxClipsInFlight ?? null) : null;
  const [value, setValue] = useState(current === null ? '' : String(current));
  // another admin's change (a workspace event re-reads the list) shows here
  useEffect(() => setValue(current === null ? '' : String(current)), [current]);

  const wanted = value.trim() === '' ? null : Number(value.trim());
  const valid = wanted === null || (Number.isInteger(wanted) && wanted >= 1 && wanted <= MAX_CLIPS_IN_FLIGHT_CAP);

  const { busy, error, submit } = useFormSubmit(
    () => setClipCap(workspaceId, wanted),
    (saved) => {
      toast({
        kind: 'success',
        message: saved.maxClipsInFlight === null ? 'No workspace limit on clips at a time.' : `At most ${saved.maxClipsInFlight} ${saved.maxClipsInFlight === 1 ? 'clip' : 'clips'} at a time in this workspace.`,
      });
      refreshWorkspaces();
    },
  );

  return (
    <section className="panel form-panel" aria-labelledby="clip-cap-title">
      <h2 id="clip-cap-title">Clips at a time</h2>
      <form onSubmit={(e) => (valid ? submit(e) : e.preventDefault())} aria-label="Clips at a time">
        <TextField
          label="Most clips generating at once"
          name="max-clips-in-flight"
          inputMode="numeric"
          placeholder="No limit"
          value={value}
          onChange={(e) => setValue(e.target.value)}
          hint={CLIP_CAP_HINT}
          error={valid ? null : `Enter a whole number from 1 to ${MAX_CLIPS_IN_FLIGHT_CAP}, or leave it empty.`}
        />
        {error && (
          <p className="form-error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" className="button button-secondary" disabled={busy || !valid || wanted === current}>
          {busy ? 'Saving...' : 'Save limit'}
        </button>
      </form>
    </section>
  );
}
