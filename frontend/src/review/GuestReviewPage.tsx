import { useCallback, useEffect, useRef, useState, type FormEvent, type MouseEvent, type ReactElement } from 'react';
import { GUEST_NAME_MAX, guestEmailProblem, REVIEW_LINK_MSG, type GuestItemView } from '../../../domain/reviewLinks';
import {
  GuestApiError,
  approveItem,
  fetchReview,
  fetchThreads,
  openSession,
  postComment,
  postReply,
  requestChanges,
  storeGuest,
  storedGuest,
  type CommentPin,
  type CommentThreadView,
  type Guest,
  type GuestReviewView,
} from './guestApi';

type Stage =
  | { kind: 'opening' }
  | { kind: 'password'; error: string | null }
  | { kind: 'closed'; title: string; text: string }
  | { kind: 'open'; linkId: string };

/** How often the page looks for a next version while one is being made. */
const NEXT_VERSION_POLL_MS = 15_000;

const STATUS_TEXT: Record<GuestItemView['status'], string> = {
  pending: 'Waiting for your review',
  approved: 'Approved',
  rejected: 'Changes requested',
  expired: 'No longer open for review',
};

function tokenFromPath(): string {
  const m = /^\/r\/([^/?#]+)/.exec(window.location.pathname);
  return m ? decodeURIComponent(m[1]) : '';
}

function closedFor(err: unknown): Stage {
  if (err instanceof GuestApiError && err.status === 410) return { kind: 'closed', title: 'This link no longer works', text: err.message };
  if (err instanceof GuestApiError && err.status === 404) return { kind: 'closed', title: 'Link not found', text: err.message };
  if (err instanceof GuestApiError && err.status === 429) return { kind: 'closed', title: 'Please wait a moment', text: err.message };
  return { kind: 'closed', title: 'Something went wrong', text: err instanceof Error ? err.message : 'Please try again.' };
}

/**
 * A review link's page (issue 43 item 2), phone first: the studio's name and message, each item as its watermarked
 * preview (images zoomable, clips playable) with its threads and pins, the guest's name and e-mail asked once and
 * kept for this link, and approve / request changes where the link allows. Everything is text: nothing a guest or
 * member wrote is read as HTML.
 */
export function GuestReviewPage(): ReactElement {
  const token = useRef(tokenFromPath()).current;
  const [stage, setStage] = useState<Stage>({ kind: 'opening' });
  const [password, setPassword] = useState('');

  const open = useCallback(
    async (withPassword: string | null) => {
      try {
        const session = await openSession(token, withPassword);
        setStage({ kind: 'open', linkId: session.linkId });
      } catch (err) {
        if (err instanceof GuestApiError && err.status === 401) setStage({ kind: 'password', error: withPassword === null ? null : err.message });
        else setStage(closedFor(err));
      }
    },
    [token],
  );

  useEffect(() => {
    void open(null);
  }, [open]);

  if (stage.kind === 'opening') {
    return (
      <main className="guest-page" aria-busy="true">
        <p role="status">Opening the review...</p>
      </main>
    );
  }
  if (stage.kind === 'closed') {
    return (
      <main className="guest-page">
        <section className="guest-panel" aria-labelledby="closed-title">
          <h1 id="closed-title">{stage.title}</h1>
          <p>{stage.text}</p>
        </section>
      </main>
    );
  }
  if (stage.kind === 'password') {
    return (
      <main className="guest-page">
        <form
          className="guest-panel"
          aria-labelledby="password-title"
          onSubmit={(e) => {
            e.preventDefault();
            void open(password);
          }}
        >
          <h1 id="password-title">This review is protected</h1>
          <p>{REVIEW_LINK_MSG.passwordRequired}</p>
          <label htmlFor="guest-password">Password</label>
          <input id="guest-password" type="password" autoComplete="off" value={password} onChange={(e) => setPassword(e.target.value)} required />
          {stage.error && (
            <p className="guest-error" role="alert">
              {stage.error}
            </p>
          )}
          <button type="submit" className="guest-button guest-button-primary">
            Open the review
          </button>
        </form>
      </main>
    );
  }
  return <Review linkId={stage.linkId} onClosed={(err) => setStage(closedFor(err))} />;
}

function Review({ linkId, onClosed }: { linkId: string; onClosed: (err: unknown) => void }): ReactElement {
  const [review, setReview] = useState<GuestReviewView | null>(null);
  const [guest, setGuest] = useState<Guest | null>(() => storedGuest(linkId));
  const [error, setError] = useState<string | null>(null);

  const load = useCallback(async () => {
    try {
      setReview(await fetchReview(linkId));
    } catch (err) {
      if (err instanceof GuestApiError && (err.status === 410 || err.status === 401 || err.status === 404)) onClosed(err);
      else setError(err instanceof Error ? err.message : 'Please try again.');
    }
  }, [linkId, onClosed]);

  useEffect(() => {
    void load();
  }, [load]);

  useEffect(() => {
    if (review) document.title = `${review.link.title} · ${review.studio.name}`;
  }, [review]);

  // while an item's next version is being made (changes were requested), look again now and then: it appears here
  const waiting = review?.items.some((i) => i.status === 'rejected') ?? false;
  useEffect(() => {
    if (!waiting) return;
    const timer = setInterval(() => {
      if (document.visibilityState === 'visible') void load();
    }, NEXT_VERSION_POLL_MS);
    return () => clearInterval(timer);
  }, [waiting, load]);

  if (!review) {
    return (
      <main className="guest-page">
        {error ? (
          <p role="alert" className="guest-error">
            {error}
          </p>
        ) : (
          <p role="status">Loading the review...</p>
        )}
      </main>
    );
  }

  return (
    <main className="guest-page">
      <header className="guest-header">
        <p className="guest-studio">{review.studio.name}</p>
        <h1>{review.link.title}</h1>
        {review.link.message && <p className="guest-message">{review.link.message}</p>}
        <p className="guest-note">
          {review.link.canDecide ? 'Look at each item, comment on it, and approve it or ask for changes.' : 'Look at each item and tell the studio what you think.'} Pictures carry a watermark until they are approved.
        </p>
      </header>
      {!guest ? <GuestForm onDone={(g) => { storeGuest(linkId, g); setGuest(g); }} /> : (
        <p className="guest-as">
          Commenting as {guest.name} ({guest.email}){' '}
          <button type="button" className="guest-link-button" onClick={() => setGuest(null)}>
            Change
          </button>
        </p>
      )}
      {review.items.length === 0 && <p>There is nothing to review on this link any more.</p>}
      <ol className="guest-items" aria-label="Items to review">
        {review.items.map((item) => (
          <li key={item.id}>
            <ItemCard linkId={linkId} item={item} guest={guest} onChanged={() => void load()} onClosed={onClosed} />
          </li>
        ))}
      </ol>
    </main>
  );
}

function GuestForm({ onDone }: { onDone: (guest: Guest) => void }): ReactElement {
  const [name, setName] = useState('');
  const [email, setEmail] = useState('');
  const [error, setError] = useState<string | null>(null);
  function submit(e: FormEvent): void {
    e.preventDefault();
    if (!name.trim()) return setError(REVIEW_LINK_MSG.guestNameRequired);
    const problem = guestEmailProblem(email);
    if (problem) return setError(problem);
    onDone({ name: name.trim(), email: email.trim().toLowerCase() });
  }
  return (
    <form className="guest-panel guest-identity" onSubmit={submit} aria-labelledby="identity-title">
      <h2 id="identity-title">Who is reviewing?</h2>
      <p>The studio sees your name and e-mail with your comments and decisions. This browser remembers them for this link.</p>
      <label htmlFor="guest-name">Your name</label>
      <input id="guest-name" value={name} maxLength={GUEST_NAME_MAX} autoComplete="name" onChange={(e) => setName(e.target.value)} />
      <label htmlFor="guest-email">Your e-mail</label>
      <input id="guest-email" type="email" value={email} autoComplete="email" onChange={(e) => setEmail(e.target.value)} />
      {error && (
        <p className="guest-error" role="alert">
          {error}
        </p>
      )}
      <button type="submit" className="guest-button guest-button-primary">
        Continue
      </button>
    </form>
  );
}

function pinLabel(pin: CommentPin | null): string {
  if (!pin) return '';
  const parts: string[] = [];
  if (pin.x !== undefined && pin.y !== undefined) parts.push(`at ${Math.round(pin.x * 100)}%, ${Math.round(pin.y * 100)}%`);
  if (pin.t !== undefined) parts.push(`at ${pin.t.toFixed(1)} s`);
  return parts.join(' ');
}

function ItemCard({ linkId, item, guest, onChanged, onClosed }: { linkId: string; item: GuestItemView; guest: Guest | null; onChanged: () => void; onClosed: (err: unknown) => void }): ReactElement {
  const [threads, setThreads] = useState<CommentThreadView[]>([]);
  const [zoomed, setZoomed] = useState(false);
  const [pinning, setPinning] = useState(false);
  const [pin, setPin] = useState<CommentPin | null>(null);
  const [text, setText] = useState('');
  const [mode, setMode] = useState<'comment' | 'changes'>('comment');
  const [busy, setBusy] = useState(false);
  const [status, setStatus] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const video = useRef<HTMLVideoElement>(null);
  const headingId = `item-${item.id}`;

  const loadThreads = useCallback(async () => {
    try {
      setThreads((await fetchThreads(linkId, item.id)).threads);
    } catch (err) {
      if (err instanceof GuestApiError && (err.status === 410 || err.status === 401)) onClosed(err);
    }
  }, [linkId, item.id, onClosed]);

  useEffect(() => {
    void loadThreads();
  }, [loadThreads]);

  function placePin(e: MouseEvent<HTMLElement>): void {
    if (!pinning) {
      if (item.kind === 'image') setZoomed((z) => !z);
      return;
    }
    const box = e.currentTarget.getBoundingClientRect();
    const x = Math.min(1, Math.max(0, (e.clientX - box.left) / box.width));
    const y = Math.min(1, Math.max(0, (e.clientY - box.top) / box.height));
    const t = video.current ? Math.round(video.current.currentTime * 10) / 10 : undefined;
    setPin({ x: Math.round(x * 10000) / 10000, y: Math.round(y * 10000) / 10000, ...(t !== undefined ? { t } : {}) });
    setPinning(false);
  }

  async function run(action: () => Promise<string | null>): Promise<void> {
    if (!guest) {
      setError(REVIEW_LINK_MSG.guestRequired);
      return;
    }
    setBusy(true);
    setError(null);
    setStatus(null);
    try {
      const said = await action();
      if (said) setStatus(said);
      await loadThreads();
    } catch (err) {
      if (err instanceof GuestApiError && (err.status === 410 || err.status === 401)) onClosed(err);
      else setError(err instanceof Error ? err.message : 'Please try again.');
    } finally {
      setBusy(false);
    }
  }

  function submit(e: FormEvent): void {
    e.preventDefault();
    const body = text.trim();
    if (!body) {
      setError(mode === 'changes' ? 'Say what should change' : 'Write a comment first');
      return;
    }
    void run(async () => {
      if (mode === 'changes') {
        const res = await requestChanges(linkId, item.id, guest as Guest, body, pin);
        setText('');
        setPin(null);
        setMode('comment');
        onChanged();
        return res.message;
      }
      await postComment(linkId, item.id, guest as Guest, body, pin);
      setText('');
      setPin(null);
      return 'Comment sent to the studio.';
    });
  }

  const pinned = threads.filter((t) => t.pin && t.pin.x !== undefined && t.pin.y !== undefined);

  return (
    <article className="guest-item" aria-labelledby={headingId}>
      <h2 id={headingId} className="guest-item-title">
        {item.name}
        {item.version > 1 && <span className="guest-version"> · version {item.version}</span>}
      </h2>
      <p className={`guest-status guest-status-${item.status}`}>{STATUS_TEXT[item.status]}</p>
      <div className={`guest-media${zoomed ? ' guest-media-zoomed' : ''}${pinning ? ' guest-media-pinning' : ''}`}>
        {item.previewUrl ? (
          <div className="guest-media-frame" onClick={placePin} data-testid="guest-media">
            {item.kind === 'image' ? (
              <img src={item.previewUrl} alt={`Preview of ${item.name}${zoomed ? ' (zoomed in)' : ''}`} referrerPolicy="no-referrer" />
            ) : (
              <video ref={video} src={item.previewUrl} controls playsInline preload="metadata" aria-label={`Preview of ${item.name}`} />
            )}
            {pinned.map((t, i) => (
              <span key={t.id} className="guest-pin" aria-hidden="true" style={{ left: `${(t.pin?.x ?? 0) * 100}%`, top: `${(t.pin?.y ?? 0) * 100}%` }}>
                {i + 1}
              </span>
            ))}
            {pin?.x !== undefined && <span className="guest-pin guest-pin-new" aria-hidden="true" style={{ left: `${pin.x * 100}%`, top: `${(pin.y ?? 0) * 100}%` }} />}
          </div>
        ) : (
          <p className="guest-no-preview">No preview to show.</p>
        )}
      </div>
      {item.kind === 'image' && item.previewUrl && !pinning && (
        <p className="guest-hint">
          <button type="button" className="guest-link-button" onClick={() => setZoomed((z) => !z)} aria-pressed={zoomed}>
            {zoomed ? 'Zoom out' : 'Zoom in'}
          </button>
        </p>
      )}
      {item.downloadUrl && (
        <p>
          <a className="guest-button" href={item.downloadUrl} rel="noreferrer" download>
            Download
          </a>
        </p>
      )}

      <section aria-label={`Comments on ${item.name}`} className="guest-threads">
        {threads.length === 0 ? <p className="guest-hint">No comments yet.</p> : null}
        <ol>
          {threads.map((t) => (
            <Thread key={t.id} thread={t} number={pinned.indexOf(t) + 1} onReply={(body) => run(async () => (await postReply(linkId, t.id, guest as Guest, body), 'Reply sent.'))} />
          ))}
        </ol>
      </section>

      {item.status === 'pending' || item.status === 'approved' ? (
        <form className="guest-composer" onSubmit={submit}>
          <label htmlFor={`text-${item.id}`}>{mode === 'changes' ? 'What should change?' : 'Your comment'}</label>
          <textarea id={`text-${item.id}`} rows={3} value={text} maxLength={5000} onChange={(e) => setText(e.target.value)} />
          <div className="guest-row">
            {item.previewUrl && (
              <button type="button" className="guest-button" aria-pressed={pinning} onClick={() => setPinning((p) => !p)}>
                {pinning ? 'Tap the picture to place the pin' : pin ? `Pinned ${pinLabel(pin)}` : 'Pin to a spot'}
              </button>
            )}
            {pin && (
              <button type="button" className="guest-link-button" onClick={() => setPin(null)}>
                Remove pin
              </button>
            )}
          </div>
          <div className="guest-row">
            <button type="submit" className="guest-button guest-button-primary" disabled={busy}>
              {mode === 'changes' ? 'Send request for changes' : 'Send comment'}
            </button>
            {mode === 'changes' && (
              <button type="button" className="guest-link-button" onClick={() => setMode('comment')}>
                Cancel
              </button>
            )}
          </div>
        </form>
      ) : null}
      {item.canDecide && mode === 'comment' && (
        <div className="guest-decide guest-row">
          <button type="button" className="guest-button guest-button-approve" disabled={busy} onClick={() => void run(async () => { const res = await approveItem(linkId, item.id, guest as Guest); onChanged(); return res.message; })}>
            Approve
          </button>
          {(item.kind === 'image' || item.kind === 'clip') && (
            <button type="button" className="guest-button" disabled={busy} onClick={() => setMode('changes')}>
              Request changes
            </button>
          )}
        </div>
      )}
      <div aria-live="polite">
        {status && (
          <p className="guest-ok" role="status">
            {status}
          </p>
        )}
      </div>
      {error && (
        <p className="guest-error" role="alert">
          {error}
        </p>
      )}
    </article>
  );
}

function Thread({ thread, number, onReply }: { thread: CommentThreadView; number: number; onReply: (body: string) => Promise<void> }): ReactElement {
  const [replying, setReplying] = useState(false);
  const [text, setText] = useState('');
  return (
    <li className="guest-thread">
      {number > 0 && <span className="guest-thread-pin">Pin {number}</span>}
      {thread.changeRequest && <span className="guest-thread-tag">Request for changes</span>}
      {thread.resolved && <span className="guest-thread-tag">Resolved</span>}
      <ol>
        {thread.comments.map((c) => (
          <li key={c.id} className="guest-comment">
            <p className="guest-comment-author">{c.author?.name ?? 'Someone'}</p>
            <p className="guest-comment-body">{c.body}</p>
          </li>
        ))}
      </ol>
      {replying ? (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            if (!text.trim()) return;
            void onReply(text.trim()).then(() => {
              setText('');
              setReplying(false);
            });
          }}
        >
          <label htmlFor={`reply-${thread.id}`}>Your reply</label>
          <textarea id={`reply-${thread.id}`} rows={2} value={text} onChange={(e) => setText(e.target.value)} />
          <button type="submit" className="guest-button">
            Send reply
          </button>
        </form>
      ) : (
        <button type="button" className="guest-link-button" onClick={() => setReplying(true)}>
          Reply
        </button>
      )}
    </li>
  );
}
