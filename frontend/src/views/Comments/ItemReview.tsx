import { useAtomValue } from 'jotai';
import { useCallback, useEffect, useId, useRef, useState, type CSSProperties, type ReactElement, type ReactNode } from 'react';
import type { CommentPin, CommentThreadView } from '../../api/comments';
import { deleteComment, editComment, fetchCommentThreads, openCommentThread, replyToThread, setThreadResolved } from '../../api/comments';
import { apiErrorMessage } from '../../api/client';
import { fetchMembers } from '../../api/workspaces';
import { commentChangeAtom } from '../../atoms/comments';
import { realtimeResyncAtom } from '../../atoms/realtime';
import { currentUserAtom } from '../../atoms/session';
import { currentWorkspaceAtom, workspaceAllowsAtom } from '../../atoms/workspace';
import { Icon } from '../../components/Icon';
import { CommentComposer, type MentionableMember } from './CommentComposer';
import { CommentText } from './CommentText';
import { ItemHistory } from './ItemHistory';
import { pinFromDrag, pinText, timeText, whenText } from './commentFormat';
import { versionLabel } from '../../../../domain/changeRequests';
import './comments.css';

export interface ReviewMedia {
  type: 'image' | 'video';
  /** null while no picture can be shown (the preview is being made) */
  src: string | null;
  alt: string;
}

/** A time pin shows on the video while it plays within this many seconds of it. */
const TIME_PIN_WINDOW_S = 1.5;
/** Arrow keys move the pin cursor this far (Shift: ten times as far). */
const KEY_STEP = 0.02;

function failure(err: unknown): Error {
  return new Error(apiErrorMessage(err, 'Could not reach the server. Check your connection and try again.'));
}

function pinStyle(pin: CommentPin): CSSProperties {
  return {
    left: `${(pin.x ?? 0) * 100}%`,
    top: `${(pin.y ?? 0) * 100}%`,
    ...(pin.w !== undefined && pin.h !== undefined ? { width: `${pin.w * 100}%`, height: `${pin.h * 100}%` } : {}),
  };
}

/**
 * An item's picture (or video) with its comment threads beside it (issue 42, DESIGN.md "Review"): pins numbered on
 * the picture, each thread with its replies, and a field to open a thread, pinned to a point or an area (click, drag,
 * or the arrow keys and Enter) and, on a video, to the current time. Threads follow live: any change to the item's
 * threads (this tab or anyone's) re-reads them.
 */
export function ItemReview({ itemId, media, fallback }: { itemId: string; media: ReviewMedia; fallback?: ReactNode }): ReactElement {
  const user = useAtomValue(currentUserAtom);
  const workspace = useAtomValue(currentWorkspaceAtom);
  const allows = useAtomValue(workspaceAllowsAtom);
  const change = useAtomValue(commentChangeAtom);
  const resync = useAtomValue(realtimeResyncAtom);
  const [threads, setThreads] = useState<CommentThreadView[] | null>(null);
  const [loadFailed, setLoadFailed] = useState(false);
  const [members, setMembers] = useState<MentionableMember[]>([]);
  const [pinMode, setPinMode] = useState(false);
  const [draft, setDraft] = useState<CommentPin | null>(null);
  const [cursor, setCursor] = useState<{ x: number; y: number }>({ x: 0.5, y: 0.5 });
  const [drag, setDrag] = useState<{ from: { x: number; y: number }; to: { x: number; y: number } } | null>(null);
  const [atTime, setAtTime] = useState(true);
  const [videoTime, setVideoTime] = useState(0);
  const [showResolved, setShowResolved] = useState(false);
  const [active, setActive] = useState<string | null>(null);
  const stage = useRef<HTMLDivElement>(null);
  const video = useRef<HTMLVideoElement>(null);
  const headingId = useId();
  const canComment = allows('comment');

  // Reads can overlap (a live note, a resync, a local change) and answer out of order: only the newest read's answer
  // is applied, and a change made here makes a read already under way stale (it may predate the change) and starts
  // a fresh one, so an older list never replaces a newer one.
  const generation = useRef(0);
  const reading = useRef(0);
  const load = useCallback(
    (signal?: AbortSignal) => {
      const mine = ++generation.current;
      reading.current += 1;
      return fetchCommentThreads(itemId, signal)
        .then(
          (list) => {
            if (mine !== generation.current) return;
            setThreads(list.threads);
            setLoadFailed(false);
          },
          () => {
            if (!signal?.aborted && mine === generation.current) setLoadFailed(true);
          },
        )
        .finally(() => {
          reading.current -= 1;
        });
    },
    [itemId],
  );

  useEffect(() => {
    const abort = new AbortController();
    setThreads(null);
    void load(abort.signal);
    return () => abort.abort();
  }, [load]);

  // someone changed this item's threads (or the stream came back after a gap): read them again
  const lastChange = useRef(change.n);
  useEffect(() => {
    if (change.n === lastChange.current) return;
    lastChange.current = change.n;
    if (change.itemId === itemId) void load();
  }, [change, itemId, load]);
  const lastResync = useRef(resync);
  useEffect(() => {
    if (resync === lastResync.current) return;
    lastResync.current = resync;
    void load();
  }, [resync, load]);

  useEffect(() => {
    if (!workspace?.id || !canComment) return;
    let live = true;
    fetchMembers(workspace.id).then(
      (list) => live && setMembers(list.map((m) => ({ userId: m.userId, name: m.name || m.email, email: m.email }))),
      () => undefined,
    );
    return () => {
      live = false;
    };
  }, [workspace?.id, canComment]);

  const replace = (thread: CommentThreadView | null, removedId?: string) => {
    const stale = reading.current > 0;
    generation.current += 1;
    setThreads((all) => {
      const list = all ?? [];
      if (!thread) return list.filter((t) => t.id !== removedId);
      return list.some((t) => t.id === thread.id) ? list.map((t) => (t.id === thread.id ? thread : t)) : [...list, thread];
    });
    if (stale) void load();
  };

  const fraction = (event: { clientX: number; clientY: number }) => {
    const box = stage.current?.getBoundingClientRect();
    if (!box || box.width === 0 || box.height === 0) return { x: 0.5, y: 0.5 };
    return { x: Math.min(1, Math.max(0, (event.clientX - box.left) / box.width)), y: Math.min(1, Math.max(0, (event.clientY - box.top) / box.height)) };
  };

  const place = (pin: CommentPin) => {
    setDraft(pin);
    setPinMode(false);
    setDrag(null);
  };

  const timed = media.type === 'video';
  const draftWithTime = (): CommentPin | null => {
    const point = draft && draft.x !== undefined ? draft : null;
    const t = timed && atTime ? Math.round((video.current?.currentTime ?? videoTime) * 1000) / 1000 : undefined;
    if (!point && t === undefined) return null;
    return { ...(point ?? {}), ...(t !== undefined ? { t } : {}) };
  };

  const visible = (threads ?? []).filter((t) => showResolved || !t.resolved);
  const resolvedCount = (threads ?? []).filter((t) => t.resolved).length;
  const numberOf = new Map((threads ?? []).map((t, i) => [t.id, i + 1]));
  const pinsShown = visible.filter((t) => t.pin && t.pin.x !== undefined && (!timed || t.pin.t === undefined || Math.abs(videoTime - t.pin.t) <= TIME_PIN_WINDOW_S));

  const focusThread = (thread: CommentThreadView) => {
    setActive(thread.id);
    if (timed && thread.pin?.t !== undefined && video.current) {
      video.current.currentTime = thread.pin.t;
      video.current.pause();
    }
    document.getElementById(`thread-${thread.id}`)?.scrollIntoView({ block: 'nearest' });
  };

  const liveRect = drag ? pinFromDrag(drag.from, drag.to) : null;

  return (
    <div className="review">
      <div className="review-media">
        {media.src ? (
          <div className="review-stage" ref={stage}>
            {media.type === 'video' ? (
              <video ref={video} src={media.src} controls playsInline preload="metadata" aria-label={media.alt} onTimeUpdate={(e) => setVideoTime(e.currentTarget.currentTime)} onSeeked={(e) => setVideoTime(e.currentTarget.currentTime)} />
            ) : (
              <img src={media.src} alt={media.alt} />
            )}
            {pinsShown.map((t) => (
              <button
                key={t.id}
                type="button"
                className={`review-pin${t.pin?.w !== undefined ? ' review-pin-area' : ''}${active === t.id ? ' review-pin-active' : ''}${t.resolved ? ' review-pin-resolved' : ''}`}
                style={pinStyle(t.pin as CommentPin)}
                aria-label={`Comment ${numberOf.get(t.id)}: ${pinText(t.pin as CommentPin)}`}
                title={t.comments[0]?.body.slice(0, 120)}
                onClick={() => focusThread(t)}
              >
                <span className="review-pin-number">{numberOf.get(t.id)}</span>
              </button>
            ))}
            {draft && draft.x !== undefined && !pinMode && <span className={`review-pin review-pin-draft${draft.w !== undefined ? ' review-pin-area' : ''}`} style={pinStyle(draft)} aria-hidden="true" />}
            {pinMode && (
              <div
                className="review-pin-capture"
                role="application"
                tabIndex={0}
                aria-label="Choose where your comment points: click a point or drag an area; or move with the arrow keys and press Enter. Escape cancels."
                autoFocus
                onPointerDown={(event) => {
                  event.currentTarget.setPointerCapture(event.pointerId);
                  const at = fraction(event);
                  setDrag({ from: at, to: at });
                }}
                onPointerMove={(event) => {
                  if (drag) setDrag({ from: drag.from, to: fraction(event) });
                }}
                onPointerUp={(event) => {
                  if (drag) place(pinFromDrag(drag.from, fraction(event)));
                }}
                onKeyDown={(event) => {
                  const step = event.shiftKey ? KEY_STEP * 10 : KEY_STEP;
                  const move: Record<string, [number, number]> = { ArrowLeft: [-step, 0], ArrowRight: [step, 0], ArrowUp: [0, -step], ArrowDown: [0, step] };
                  if (move[event.key]) {
                    event.preventDefault();
                    const [dx, dy] = move[event.key];
                    setCursor((c) => ({ x: Math.min(1, Math.max(0, c.x + dx)), y: Math.min(1, Math.max(0, c.y + dy)) }));
                  } else if (event.key === 'Enter' || event.key === ' ') {
                    event.preventDefault();
                    place({ x: cursor.x, y: cursor.y });
                  } else if (event.key === 'Escape') {
                    event.preventDefault();
                    event.stopPropagation();
                    setPinMode(false);
                  }
                }}
              >
                {liveRect && liveRect.w !== undefined ? (
                  <span className="review-pin review-pin-area review-pin-draft" style={pinStyle(liveRect)} aria-hidden="true" />
                ) : (
                  <span className="review-cursor" style={pinStyle(cursor)} aria-hidden="true" />
                )}
              </div>
            )}
          </div>
        ) : (
          fallback
        )}
      </div>

      <section className="review-threads" aria-labelledby={headingId}>
        <h3 id={headingId} className="review-heading">
          <Icon name="message" size={18} /> Comments
          {threads && <span className="muted review-count">{threads.length - resolvedCount} open</span>}
        </h3>

        {canComment && (
          <CommentComposer
            label="Add a comment"
            submitLabel="Comment"
            busyLabel="Posting..."
            members={members}
            onSubmit={async (body) => {
              try {
                const thread = await openCommentThread(itemId, { body, pin: draftWithTime() });
                replace(thread);
                setDraft(null);
              } catch (err) {
                throw failure(err);
              }
            }}
            extra={
              media.src ? (
                <div className="review-pin-controls">
                  <button type="button" className="button button-ghost button-small" aria-pressed={pinMode} onClick={() => setPinMode((on) => !on)}>
                    <Icon name="pin" size={16} /> {draft && draft.x !== undefined ? 'Move pin' : 'Pin to picture'}
                  </button>
                  {draft && draft.x !== undefined && (
                    <span className="review-pin-summary">
                      {pinText(draft)}{' '}
                      <button type="button" className="link-button" onClick={() => setDraft(null)}>
                        Remove pin
                      </button>
                    </span>
                  )}
                  {timed && (
                    <label className="review-time-choice">
                      <input type="checkbox" checked={atTime} onChange={(e) => setAtTime(e.target.checked)} /> At {timeText(videoTime)}
                    </label>
                  )}
                </div>
              ) : undefined
            }
          />
        )}

        {loadFailed && (
          <p className="form-error" role="alert">
            Could not load the comments.{' '}
            <button type="button" className="link-button" onClick={() => void load()}>
              Try again
            </button>
          </p>
        )}
        {!threads && !loadFailed && <p className="muted">Loading comments…</p>}
        {threads && threads.length === 0 && <p className="muted review-empty">No comments yet.{canComment ? ' Say what you think, or pin a comment to a spot on the picture.' : ''}</p>}

        <ol className="review-thread-list">
          {visible.map((thread) => (
            <ThreadItem
              key={thread.id}
              thread={thread}
              number={numberOf.get(thread.id) ?? 0}
              active={active === thread.id}
              userId={user?.id ?? null}
              canComment={canComment}
              canDecide={allows('approve')}
              canModerate={allows('manageMembers')}
              members={members}
              onFocusPin={() => focusThread(thread)}
              onChanged={replace}
            />
          ))}
        </ol>
        {resolvedCount > 0 && (
          <button type="button" className="link-button review-resolved-toggle" aria-expanded={showResolved} onClick={() => setShowResolved((v) => !v)}>
            {showResolved ? 'Hide resolved' : `Show resolved (${resolvedCount})`}
          </button>
        )}
        <ItemHistory itemId={itemId} />
      </section>
    </div>
  );
}

interface ThreadItemProps {
  thread: CommentThreadView;
  number: number;
  active: boolean;
  userId: string | null;
  canComment: boolean;
  canDecide: boolean;
  canModerate: boolean;
  members: readonly MentionableMember[];
  onFocusPin: () => void;
  onChanged: (thread: CommentThreadView | null, removedId?: string) => void;
}

function ThreadItem({ thread, number, active, userId, canComment, canDecide, canModerate, members, onFocusPin, onChanged }: ThreadItemProps): ReactElement {
  const [replying, setReplying] = useState(false);
  const [editing, setEditing] = useState<string | null>(null);
  const [confirming, setConfirming] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const opener = thread.comments[0];
  const mayResolve = canComment && (canDecide || opener?.author?.userId === userId);

  const run = async (work: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    try {
      await work();
    } catch (err) {
      setError(failure(err).message);
    } finally {
      setBusy(false);
    }
  };

  return (
    <li id={`thread-${thread.id}`} className={`review-thread${active ? ' review-thread-active' : ''}${thread.resolved ? ' review-thread-resolved' : ''}`} data-thread-id={thread.id}>
      <div className="review-thread-head">
        <span className="review-thread-number" aria-label={`Comment ${number}`}>
          {number}
        </span>
        {thread.pin && (
          <button type="button" className="link-button review-thread-pin" onClick={onFocusPin}>
            <Icon name="pin" size={14} /> {pinText(thread.pin)}
          </button>
        )}
        {thread.changeRequest && <span className="badge review-request-badge">Requested changes</span>}
        {thread.onVersion !== null && (
          <span className="badge review-version-badge" title={`Started on version ${thread.onVersion}`}>
            {versionLabel(thread.onVersion)}
          </span>
        )}
        {thread.resolved && <span className="badge review-resolved-badge">Resolved{thread.resolvedBy ? ` by ${thread.resolvedBy.name}` : ''}</span>}
      </div>
      <ul className="review-comments">
        {thread.comments.map((c) => {
          const mine = c.author?.userId === userId && userId !== null;
          return (
            <li key={c.id} className="review-comment" data-comment-id={c.id}>
              <p className="review-comment-meta">
                <strong>{c.author?.name ?? 'Deleted account'}</strong>{' '}
                <time className="muted" dateTime={c.createdAt} title={new Date(c.createdAt).toLocaleString()}>
                  {whenText(c.createdAt)}
                </time>
                {c.editedAt && <span className="muted"> (edited)</span>}
              </p>
              {editing === c.id ? (
                <CommentComposer
                  label="Edit your comment"
                  submitLabel="Save"
                  busyLabel="Saving..."
                  initial={c.body}
                  members={members}
                  autoFocus
                  onCancel={() => setEditing(null)}
                  onSubmit={async (body) => {
                    try {
                      onChanged(await editComment(c.id, body));
                      setEditing(null);
                    } catch (err) {
                      throw failure(err);
                    }
                  }}
                />
              ) : (
                <CommentText body={c.body} mentions={c.mentions} />
              )}
              {confirming === c.id ? (
                <p className="review-confirm" role="group" aria-label="Confirm delete">
                  {c.id === opener?.id && thread.comments.length > 1 ? 'Delete this comment and its replies?' : 'Delete this comment?'}{' '}
                  <button
                    type="button"
                    className="button button-danger button-small"
                    disabled={busy}
                    onClick={() =>
                      void run(async () => {
                        const after = await deleteComment(c.id);
                        onChanged(after, thread.id);
                        setConfirming(null);
                      })
                    }
                  >
                    {busy ? 'Deleting...' : 'Delete'}
                  </button>{' '}
                  <button type="button" className="button button-ghost button-small" onClick={() => setConfirming(null)} disabled={busy}>
                    Cancel
                  </button>
                </p>
              ) : (
                editing !== c.id &&
                canComment &&
                (mine || canModerate) && (
                  <p className="review-comment-actions">
                    {mine && (
                      <button type="button" className="link-button" onClick={() => setEditing(c.id)} aria-label={`Edit your comment: ${c.body.slice(0, 40)}`}>
                        Edit
                      </button>
                    )}
                    <button type="button" className="link-button" onClick={() => setConfirming(c.id)} aria-label={`Delete comment by ${c.author?.name ?? 'a deleted account'}: ${c.body.slice(0, 40)}`}>
                      Delete
                    </button>
                  </p>
                )
              )}
            </li>
          );
        })}
      </ul>
      {canComment && (
        <div className="review-thread-actions">
          {replying ? (
            <CommentComposer
              label={`Reply to comment ${number}`}
              submitLabel="Reply"
              busyLabel="Posting..."
              members={members}
              autoFocus
              onCancel={() => setReplying(false)}
              onSubmit={async (body) => {
                try {
                  onChanged(await replyToThread(thread.id, body));
                  setReplying(false);
                } catch (err) {
                  throw failure(err);
                }
              }}
            />
          ) : (
            <button type="button" className="button button-ghost button-small" onClick={() => setReplying(true)} aria-label={`Reply to comment ${number}`}>
              Reply
            </button>
          )}
          {mayResolve && !replying && (
            <button
              type="button"
              className="button button-ghost button-small"
              disabled={busy}
              aria-label={`${thread.resolved ? 'Reopen' : 'Resolve'} comment ${number}`}
              onClick={() => void run(async () => onChanged(await setThreadResolved(thread.id, !thread.resolved)))}
            >
              {thread.resolved ? 'Reopen' : 'Resolve'}
            </button>
          )}
        </div>
      )}
      {error && (
        <p className="form-error" role="alert">
          {error}
        </p>
      )}
    </li>
  );
}
