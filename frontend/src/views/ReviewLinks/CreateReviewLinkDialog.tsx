import { useSetAtom } from 'jotai';
import { useEffect, useState, type FormEvent, type ReactElement } from 'react';
import { REVIEW_LINK_DEFAULT_DAYS, REVIEW_LINK_MAX_DAYS, REVIEW_LINK_MSG } from '../../../../domain/reviewLinks';
import { apiErrorMessage } from '../../api/client';
import { createReviewLink, emailReviewLink, fetchShareableItems, rememberLinkToken, type ShareableItemView } from '../../api/reviewLinks';
import { showToastAtom } from '../../atoms/toast';
import { Dialog } from '../../components/Dialog';
import { TextField } from '../../components/TextField';

const KIND_LABEL: Record<string, string> = { image: 'Image', clip: 'Clip', assembly: 'Video' };

/**
 * Make a review link (issue 43): from chosen pending items, or a whole project's queue; title and message; expiry;
 * an optional password; what guests may do. Then the link, shown once: copy it or e-mail it.
 */
export function CreateReviewLinkDialog({ preselected = [], onClose, onCreated }: { preselected?: string[]; onClose: () => void; onCreated?: () => void }): ReactElement {
  const toast = useSetAtom(showToastAtom);
  const [items, setItems] = useState<ShareableItemView[] | null>(null);
  const pending = (items ?? []).filter((i) => i.status === 'pending');
  const approved = (items ?? []).filter((i) => i.status === 'approved');
  // a project's queue: the projects with items waiting for approval
  const projects = [...new Map(pending.map((i) => [i.projectId, i.projectName ?? 'Project'])).entries()];
  const [scope, setScope] = useState<'items' | 'project'>('items');
  const [chosen, setChosen] = useState<ReadonlySet<string>>(new Set(preselected));
  const [projectId, setProjectId] = useState('');

  useEffect(() => {
    const abort = new AbortController();
    fetchShareableItems(abort.signal)
      .then((list) => {
        setItems(list);
        setProjectId((current) => current || (list.find((i) => i.status === 'pending')?.projectId ?? ''));
      })
      .catch(() => {
        if (!abort.signal.aborted) setItems([]);
      });
    return () => abort.abort();
  }, []);
  const [title, setTitle] = useState('');
  const [message, setMessage] = useState('');
  const [days, setDays] = useState(String(REVIEW_LINK_DEFAULT_DAYS));
  const [password, setPassword] = useState('');
  const [canDecide, setCanDecide] = useState(false);
  const [canDownload, setCanDownload] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [made, setMade] = useState<{ linkId: string; token: string; url: string } | null>(null);
  const [addresses, setAddresses] = useState('');
  const [sending, setSending] = useState(false);

  function toggle(id: string): void {
    setChosen((current) => {
      const next = new Set(current);
      if (next.has(id)) next.delete(id);
      else next.add(id);
      return next;
    });
  }

  async function onSubmit(event: FormEvent): Promise<void> {
    event.preventDefault();
    setError(null);
    const expiresInDays = Number(days);
    if (!title.trim()) return setError(REVIEW_LINK_MSG.titleRequired);
    if (!Number.isInteger(expiresInDays) || expiresInDays < 1 || expiresInDays > REVIEW_LINK_MAX_DAYS) return setError(REVIEW_LINK_MSG.expiryInvalid);
    if (scope === 'items' && chosen.size === 0) return setError(REVIEW_LINK_MSG.itemsRequired);
    setBusy(true);
    try {
      const res = await createReviewLink({
        title: title.trim(),
        message: message.trim(),
        ...(scope === 'items' ? { itemIds: [...chosen] } : { projectId }),
        expiresInDays,
        password: password || null,
        canDecide,
        canDownload,
      });
      rememberLinkToken(res.link.id, res.token, res.url);
      setMade({ linkId: res.link.id, token: res.token, url: res.url });
      onCreated?.();
    } catch (err) {
      setError(apiErrorMessage(err, 'The link could not be made. Please try again.'));
    } finally {
      setBusy(false);
    }
  }

  async function copy(url: string): Promise<void> {
    try {
      await navigator.clipboard.writeText(url);
      toast({ kind: 'success', message: 'Link copied' });
    } catch {
      toast({ kind: 'error', message: 'Copy did not work: select the link and copy it yourself.' });
    }
  }

  async function send(event: FormEvent): Promise<void> {
    event.preventDefault();
    if (!made) return;
    const to = addresses
      .split(/[\s,;]+/)
      .map((a) => a.trim())
      .filter(Boolean);
    if (to.length === 0) return setError(REVIEW_LINK_MSG.recipientsInvalid);
    setSending(true);
    setError(null);
    try {
      const sent = await emailReviewLink(made.linkId, made.token, to);
      if (sent) {
        toast({ kind: 'success', message: `Link e-mailed to ${to.join(', ')}` });
        setAddresses('');
      } else setError('The e-mail could not be sent. Copy the link and send it yourself.');
    } catch (err) {
      setError(apiErrorMessage(err, 'The e-mail could not be sent. Copy the link and send it yourself.'));
    } finally {
      setSending(false);
    }
  }

  if (made) {
    return (
      <Dialog title="Review link ready" onClose={onClose}>
        <p>Anyone with this link can see the watermarked previews{canDecide ? ', comment and decide' : ' and comment'}. It is shown here only: copy it or e-mail it now.</p>
        <div className="review-link-made">
          <TextField label="Link" value={made.url} readOnly onFocus={(e) => e.currentTarget.select()} />
          <button type="button" className="button button-secondary" onClick={() => void copy(made.url)}>
            Copy link
          </button>
        </div>
        <form onSubmit={(e) => void send(e)} className="review-link-email">
          <TextField label="E-mail it to" hint="One or more addresses, separated by commas" value={addresses} onChange={(e) => setAddresses(e.target.value)} type="text" inputMode="email" autoComplete="off" />
          <button type="submit" className="button button-primary" disabled={sending}>
            {sending ? 'Sending...' : 'Send'}
          </button>
        </form>
        {error && (
          <p className="form-error" role="alert">
            {error}
          </p>
        )}
        <div className="dialog-actions">
          <button type="button" className="button button-ghost" onClick={onClose}>
            Done
          </button>
        </div>
      </Dialog>
    );
  }

  return (
    <Dialog title="New review link" onClose={onClose} className="dialog-wide">
      <form onSubmit={(e) => void onSubmit(e)} className="review-link-form">
        <TextField label="Title" value={title} onChange={(e) => setTitle(e.target.value)} maxLength={120} required />
        <div className="field">
          <label htmlFor="review-link-message">Message to your client (optional)</label>
          <textarea id="review-link-message" value={message} onChange={(e) => setMessage(e.target.value)} maxLength={2000} rows={3} />
        </div>
        <fieldset className="review-link-scope">
          <legend>What to share</legend>
          <label>
            <input type="radio" name="scope" checked={scope === 'items'} onChange={() => setScope('items')} /> Chosen items
          </label>
          <label>
            <input type="radio" name="scope" checked={scope === 'project'} onChange={() => setScope('project')} disabled={projects.length === 0} /> A whole project's queue
          </label>
        </fieldset>
        {scope === 'items' ? (
          <fieldset className="review-link-items">
            <legend>Items ({chosen.size} chosen)</legend>
            {items === null && <p className="muted">Loading items...</p>}
            {items !== null && items.length === 0 && <p className="muted">Nothing to share yet: generated items appear here once they wait for approval.</p>}
            {[
              ['Waiting for approval', pending],
              ['Approved', approved],
            ].map(([heading, group]) =>
              (group as ShareableItemView[]).length > 0 ? (
                <div key={heading as string}>
                  <p className="review-link-group">{heading as string}</p>
                  <ul>
                    {(group as ShareableItemView[]).map((item) => (
                      <li key={item.id}>
                        <label>
                          <input type="checkbox" checked={chosen.has(item.id)} onChange={() => toggle(item.id)} /> {item.name}{' '}
                          <span className="muted">
                            ({KIND_LABEL[item.kind] ?? item.kind}
                            {item.projectName ? `, ${item.projectName}` : ''})
                          </span>
                        </label>
                      </li>
                    ))}
                  </ul>
                </div>
              ) : null,
            )}
          </fieldset>
        ) : (
          <div className="field">
            <label htmlFor="review-link-project">Project</label>
            <select id="review-link-project" value={projectId} onChange={(e) => setProjectId(e.target.value)}>
              {projects.map(([id, name]) => (
                <option key={id} value={id}>
                  {name}
                </option>
              ))}
            </select>
          </div>
        )}
        <TextField label="Works for (days)" hint={`1 to ${REVIEW_LINK_MAX_DAYS}`} type="number" min={1} max={REVIEW_LINK_MAX_DAYS} value={days} onChange={(e) => setDays(e.target.value)} />
        <TextField label="Password (optional)" hint="Give it to your client separately" type="text" autoComplete="off" value={password} onChange={(e) => setPassword(e.target.value)} />
        <fieldset className="review-link-permissions">
          <legend>Your client may</legend>
          <label>
            <input type="checkbox" checked disabled /> Comment
          </label>
          <label>
            <input type="checkbox" checked={canDecide} onChange={(e) => setCanDecide(e.target.checked)} /> Approve and request changes
          </label>
          <label>
            <input type="checkbox" checked={canDownload} onChange={(e) => setCanDownload(e.target.checked)} /> Download items once approved
          </label>
        </fieldset>
        {error && (
          <p className="form-error" role="alert">
            {error}
          </p>
        )}
        <div className="dialog-actions">
          <button type="button" className="button button-ghost" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" className="button button-primary" disabled={busy}>
            {busy ? 'Making the link...' : 'Make link'}
          </button>
        </div>
      </form>
    </Dialog>
  );
}
