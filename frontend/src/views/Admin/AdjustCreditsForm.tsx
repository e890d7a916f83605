import { useSetAtom } from 'jotai';
import { useId, useRef, useState, type FormEvent, type ReactElement } from 'react';
import { ADMIN_REASON_MAX_LENGTH } from '../../../../domain/admin';
import { MSG } from '../../../../domain/messages';
import { adjustCredits, type AdminAdjustResult, type AdminUserDetail, type AdminUserWorkspace } from '../../api/admin';
import { apiErrorMessage } from '../../api/client';
import { showToastAtom } from '../../atoms/toast';
import { TextField } from '../../components/TextField';
import { parseCreditAmount } from './adjustAmount';
import { countText } from '../../components/countText';

type Direction = 'add' | 'remove';

interface FieldErrors {
  amount?: string;
  reason?: string;
}

/** A key per intended adjustment: a retry of the same values reuses it, so the server applies it once. */
function newIdempotencyKey(): string {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return `admin-ui-${Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')}`;
}

/**
 * Credits up or down with a required reason, for one of the user's workspaces (credits belong to the workspace; the
 * personal one unless another is chosen); removals never take more than the workspace's available credits.
 */
export function AdjustCreditsForm({
  user,
  credits,
  workspaces,
  initialWorkspaceId,
  onAdjusted,
}: {
  user: AdminUserDetail['user'];
  /** the personal workspace's credits */
  credits: AdminUserDetail['credits'];
  workspaces: AdminUserWorkspace[];
  initialWorkspaceId?: string | null;
  onAdjusted: (result: AdminAdjustResult) => void;
}): ReactElement {
  const toast = useSetAtom(showToastAtom);
  const [direction, setDirection] = useState<Direction>('add');
  const [amount, setAmount] = useState('');
  const [reason, setReason] = useState('');
  const [errors, setErrors] = useState<FieldErrors>({});
  const [formError, setFormError] = useState<string | null>(null);
  const [saving, setSaving] = useState(false);
  const keyRef = useRef<string | null>(null);
  const reasonId = useId();
  const workspaceFieldId = useId();
  const personalId = workspaces.find((w) => w.personal)?.id ?? user.id;
  const [workspaceId, setWorkspaceId] = useState<string>(() =>
    initialWorkspaceId && workspaces.some((w) => w.id === initialWorkspaceId) ? initialWorkspaceId : personalId,
  );
  const target = workspaces.find((w) => w.id === workspaceId);
  // the personal workspace's numbers are the detail's (fresh after each adjustment); another's from the list
  const numbers = !target || target.personal ? { credits: credits.credits, availableCredits: credits.availableCredits } : target;

  const parsed = parseCreditAmount(amount);
  const change = typeof parsed === 'number' ? (direction === 'add' ? parsed : -parsed) : null;

  function edited() {
    // different values are a different adjustment: the next submit gets a new key
    keyRef.current = null;
    setFormError(null);
  }

  function validate(): FieldErrors {
    const found: FieldErrors = {};
    if (typeof parsed === 'string') found.amount = parsed;
    else if (direction === 'remove' && parsed > numbers.availableCredits) {
      found.amount = `Only ${countText(numbers.availableCredits, 'credit')} ${numbers.availableCredits === 1 ? 'is' : 'are'} available to remove. Credits never go below zero.`;
    }
    if (!reason.trim()) found.reason = 'A reason is required';
    return found;
  }

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const found = validate();
    setErrors(found);
    if (found.amount || found.reason || change === null) return;
    keyRef.current ??= newIdempotencyKey();
    setSaving(true);
    setFormError(null);
    try {
      const result = await adjustCredits(
        target ? { workspaceId: target.id, amount: change, reason: reason.trim(), idempotencyKey: keyRef.current } : { userId: user.id, amount: change, reason: reason.trim(), idempotencyKey: keyRef.current },
      );
      keyRef.current = null;
      setAmount('');
      setReason('');
      const verb = result.amount > 0 ? `Added ${result.amount}` : `Removed ${-result.amount}`;
      const whose = result.workspace.personal ? user.email : `the workspace “${result.workspace.name}”`;
      toast({ kind: 'success', message: `${verb} credits ${result.amount > 0 ? 'to' : 'from'} ${whose}. New balance: ${result.credits.credits}.` });
      onAdjusted(result);
    } catch (error) {
      setFormError(`Could not adjust credits: ${apiErrorMessage(error, MSG.somethingWentWrong)}`);
    } finally {
      setSaving(false);
    }
  }

  let preview = `Balance now: ${numbers.credits} (available ${numbers.availableCredits})`;
  if (change !== null && numbers.availableCredits + change < 0) preview = `Only ${countText(numbers.availableCredits, 'credit')} ${numbers.availableCredits === 1 ? 'is' : 'are'} available to remove`;
  else if (change !== null) preview = `New balance: ${numbers.credits + change} (available ${numbers.availableCredits + change})`;

  return (
    <form className="admin-adjust" aria-label="Adjust credits" onSubmit={(e) => void onSubmit(e)} noValidate>
      <fieldset className="admin-fieldset" disabled={saving}>
        {workspaces.length > 1 && (
          <div className="field">
            <label htmlFor={workspaceFieldId}>Workspace</label>
            <select
              id={workspaceFieldId}
              value={workspaceId}
              aria-describedby={`${workspaceFieldId}-hint`}
              onChange={(e) => {
                setWorkspaceId(e.target.value);
                setErrors((current) => ({ ...current, amount: undefined }));
                edited();
              }}
            >
              {workspaces.map((w) => (
                <option key={w.id} value={w.id}>
                  {w.personal ? `${w.name} (personal)` : w.name}
                </option>
              ))}
            </select>
            <p id={`${workspaceFieldId}-hint`} className="field-hint">
              Credits belong to a workspace and are shared by its members.
            </p>
          </div>
        )}
        <fieldset className="admin-direction">
          <legend>Direction</legend>
          {(['add', 'remove'] as const).map((d) => (
            <label key={d} className="admin-direction-option">
              <input
                type="radio"
                name="direction"
                value={d}
                checked={direction === d}
                onChange={() => {
                  setDirection(d);
                  edited();
                }}
              />
              {d === 'add' ? 'Add credits' : 'Remove credits'}
            </label>
          ))}
        </fieldset>

        <TextField
          label="Credits"
          type="text"
          inputMode="numeric"
          autoComplete="off"
          value={amount}
          error={errors.amount}
          onChange={(e) => {
            setAmount(e.target.value);
            setErrors((current) => ({ ...current, amount: undefined }));
            edited();
          }}
        />

        <div className="field">
          <label htmlFor={reasonId}>Reason</label>
          <textarea
            id={reasonId}
            rows={2}
            maxLength={ADMIN_REASON_MAX_LENGTH}
            value={reason}
            aria-invalid={errors.reason ? true : undefined}
            aria-describedby={`${reasonId}-hint${errors.reason ? ` ${reasonId}-error` : ''}`}
            onChange={(e) => {
              setReason(e.target.value);
              setErrors((current) => ({ ...current, reason: undefined }));
              edited();
            }}
          />
          <p id={`${reasonId}-hint`} className="field-hint">
            Recorded in the workspace's ledger with your e-mail; its members see it in their transactions.
          </p>
          {errors.reason && (
            <p id={`${reasonId}-error`} className="field-error" role="alert">
              {errors.reason}
            </p>
          )}
        </div>

        <p className="muted admin-small" aria-live="polite">
          {preview}
        </p>
        {formError && (
          <p className="form-error" role="alert">
            {formError}
          </p>
        )}
        <div className="admin-adjust-actions">
          <button type="submit" className={`button ${direction === 'add' ? 'button-primary' : 'button-danger'}`}>
            {saving ? 'Saving...' : direction === 'add' ? 'Add credits' : 'Remove credits'}
          </button>
        </div>
      </fieldset>
    </form>
  );
}
