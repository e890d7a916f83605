import { useAtomValue, useSetAtom } from 'jotai';
import { useCallback, useEffect, useState, type FormEvent, type ReactElement } from 'react';
import { REVIEW_LINK_DEFAULT_DAYS, type ReviewLinkState } from '../../../../domain/reviewLinks';
import { ROLE_LABELS, roleAllows } from '../../../../domain/workspaceRoles';
import { apiErrorMessage } from '../../api/client';
import { emailReviewLink, extendReviewLink, fetchReviewLinks, knownLinkTokens, revokeReviewLink, type ReviewLinkView } from '../../api/reviewLinks';
import { showToastAtom } from '../../atoms/toast';
import { currentWorkspaceAtom } from '../../atoms/workspace';
import { LoadingState } from '../../components/Spinner';
import { TextField } from '../../components/TextField';
import { useLoad } from '../../components/useLoad';
import { CreateReviewLinkDialog } from './CreateReviewLinkDialog';
import './reviewLinks.css';

const DATE = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const STATE_LABEL: Record<ReviewLinkState, string> = { active: 'Active', expired: 'Expired', revoked: 'Revoked' };

/**
 * Workspace -> Review links (issue 43): the workspace's links with their state, what they hold and who visited;
 * make one, copy or e-mail it (in the tab that made it: only its hash is kept), extend or revoke it.
 */
export function ReviewLinksView(): ReactElement {
  const workspace = useAtomValue(currentWorkspaceAtom);
  if (!workspace?.role) return <LoadingState label="Loading review links..." />;
  const roleNote = `Members, admins and owners share items for review. Your role in ${workspace.name ?? 'this workspace'} is ${ROLE_LABELS[workspace.role]}.`;
  return <ReviewLinks canManage={roleAllows(workspace.role, 'approve')} roleNote={roleNote} />;
}

function ReviewLinks({ canManage, roleNote }: { canManage: boolean; roleNote: string }): ReactElement {
  const [links, reload] = useLoad(useCallback(() => fetchReviewLinks(), []));
  const toast = useSetAtom(showToastAtom);
  const [creating, setCreating] = useState(false);
  const [busy, setBusy] = useState<string | null>(null);
  const tokens = knownLinkTokens();

  useEffect(() => {
    void reload();
  }, [reload]);

  async function act(link: ReviewLinkView, what: 'extend' | 'revoke'): Promise<void> {
    if (what === 'revoke' && !window.confirm(`Turn off "${link.title}"? Anyone who has it will see that it no longer works.`)) return;
    setBusy(link.id);
    try {
      if (what === 'extend') await extendReviewLink(link.id, REVIEW_LINK_DEFAULT_DAYS);
      else await revokeReviewLink(link.id);
      toast({ kind: 'success', message: what === 'extend' ? `"${link.title}" now works for ${REVIEW_LINK_DEFAULT_DAYS} more days` : `"${link.title}" is turned off` });
      await reload();
    } catch (err) {
      toast({ kind: 'error', message: apiErrorMessage(err, 'That did not work. Please try again.') });
    } finally {
      setBusy(null);
    }
  }

  async function copy(url: string): Promise<void> {
    try {
      await navigator.clipboard.writeText(url);
      toast({ kind: 'success', message: 'Link copied' });
    } catch {
      toast({ kind: 'error', message: 'Copy did not work.' });
    }
  }

  let body: ReactElement;
  if (links.status === 'loading') body = <LoadingState label="Loading review links..." />;
  else if (links.status === 'error')
    body = (
      <div role="alert" className="panel error-panel">
        <p>{links.message}</p>
        <button type="button" className="button button-secondary" onClick={() => void reload()}>
          Try again
        </button>
      </div>
    );
  else if (links.data.length === 0)
    body = (
      <div className="empty-state">
        <h2>No review links yet</h2>
        <p>Share watermarked previews with a client who has no account: they comment and, if you allow it, approve or ask for changes.</p>
      </div>
    );
  else
    body = (
      <ul className="review-link-list" aria-label="Review links">
        {links.data.map((link) => {
          const known = tokens[link.id];
          return (
            <li key={link.id} className="panel review-link-card">
              <div className="review-link-head">
                <h2>{link.title}</h2>
                <span className={`review-link-state review-link-state-${link.state}`}>{STATE_LABEL[link.state]}</span>
              </div>
              <p className="muted">
                {link.items.length} {link.items.length === 1 ? 'item' : 'items'} · {link.canDecide ? 'comment, approve and request changes' : 'comment only'}
                {link.canDownload ? ' · downloads after approval' : ''}
                {link.hasPassword ? ' · password' : ''}
              </p>
              <p className="muted">
                {link.state === 'revoked' && link.revokedAt ? `Turned off ${DATE.format(new Date(link.revokedAt))}` : `${link.state === 'expired' ? 'Expired' : 'Works until'} ${DATE.format(new Date(link.expiresAt))}`} · made by{' '}
                {link.createdBy.name}
              </p>
              <details className="review-link-visits">
                <summary>
                  {link.visitCount} {link.visitCount === 1 ? 'visit' : 'visits'}
                </summary>
                <ul>
                  {link.visits.map((v, i) => (
                    <li key={i}>
                      {DATE.format(new Date(v.at))}: {v.guestName ? `${v.guestName} (${v.guestEmail ?? ''})` : 'a guest who has not given their name'}
                    </li>
                  ))}
                </ul>
              </details>
              {canManage && (
                <div className="review-link-actions">
                  {known && link.state === 'active' && (
                    <button type="button" className="button button-secondary button-small" onClick={() => void copy(known.url)}>
                      Copy link
                    </button>
                  )}
                  {known && link.state === 'active' && <EmailLinkForm linkId={link.id} token={known.token} title={link.title} />}
                  {!known && link.state === 'active' && <p className="muted review-link-hint">The link itself was shown once, when it was made (only a fingerprint of it is kept). To share it with someone new, make another link.</p>}
                  {link.state !== 'revoked' && (
                    <button type="button" className="button button-secondary button-small" disabled={busy === link.id} onClick={() => void act(link, 'extend')}>
                      Extend {REVIEW_LINK_DEFAULT_DAYS} days
                    </button>
                  )}
                  {link.state !== 'revoked' && (
                    <button type="button" className="button button-danger button-small" disabled={busy === link.id} onClick={() => void act(link, 'revoke')}>
                      Revoke
                    </button>
                  )}
                </div>
              )}
            </li>
          );
        })}
      </ul>
    );

  return (
    <section className="view" aria-labelledby="review-links-title">
      <header className="view-header">
        <h1 id="review-links-title">Review links</h1>
        {canManage && (
          <button type="button" className="button button-primary" onClick={() => setCreating(true)}>
            New review link
          </button>
        )}
      </header>
      {!canManage && (
        <p className="notice-info role-note" role="note">
          {roleNote}
        </p>
      )}
      <p className="muted review-links-intro">Links show watermarked previews only. Originals stay locked until an item is approved, and are downloadable only where you allow it.</p>
      {body}
      {creating && <CreateReviewLinkDialog onClose={() => setCreating(false)} onCreated={() => void reload()} />}
    </section>
  );
}

/** E-mails a link made in this tab (its token is kept here only) to one or more addresses. */
function EmailLinkForm({ linkId, token, title }: { linkId: string; token: string; title: string }): ReactElement {
  const toast = useSetAtom(showToastAtom);
  const [to, setTo] = useState('');
  const [sending, setSending] = useState(false);
  async function send(event: FormEvent): Promise<void> {
    event.preventDefault();
    const addresses = to
      .split(/[\s,;]+/)
      .map((a) => a.trim())
      .filter(Boolean);
    if (addresses.length === 0) return;
    setSending(true);
    try {
      const sent = await emailReviewLink(linkId, token, addresses);
      toast(sent ? { kind: 'success', message: `Link e-mailed to ${addresses.join(', ')}` } : { kind: 'error', message: 'The e-mail could not be sent. Copy the link and send it yourself.' });
      if (sent) setTo('');
    } catch (err) {
      toast({ kind: 'error', message: apiErrorMessage(err, 'The e-mail could not be sent. Copy the link and send it yourself.') });
    } finally {
      setSending(false);
    }
  }
  return (
    <details className="review-link-email-inline">
      <summary>E-mail it</summary>
      <form onSubmit={(e) => void send(e)} className="review-link-email">
        <TextField label={`E-mail "${title}" to`} hint="One or more addresses, separated by commas" value={to} onChange={(e) => setTo(e.target.value)} autoComplete="off" />
        <button type="submit" className="button button-primary button-small" disabled={sending}>
          {sending ? 'Sending...' : 'Send'}
        </button>
      </form>
    </details>
  );
}
