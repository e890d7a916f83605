import { useEffect, useRef, useState, type FormEvent, type KeyboardEvent, type ReactElement } from 'react';
import { ASSEMBLY_MSG } from '../../../../domain/assembly';
import { apiErrorMessage, hasStatus } from '../../api/client';
import { fetchChatState, sendChatMessage, syncChatSelection, type AestheticChatState, type AssemblyClip, type ChatHistoryMessage } from '../../api/videoAssembly';
import { Icon } from '../../components/Icon';
import { LoadingState } from '../../components/Spinner';
import {
  CHAT_CLEAR_CONVERSATION,
  CHAT_FIELDS,
  afterFailedMessage,
  chatFieldLabel,
  checkChatMessage,
  editingConfigSummary,
  selectionOutOfSync,
  stillNeeded,
  suggestedOrder,
  visibleMessages,
  withPendingMessage,
  type AssemblyMode,
} from './assemblyChat';
import { clipName } from './clipText';

const CHAT_FAILED = 'Something went wrong. Please try again.';
/** A selection change is told to the chat this long after the last click (several quick clicks send once). */
const SELECTION_SYNC_DEBOUNCE_MS = 400;

const INTRO: Record<Exclude<AssemblyMode, 'selector'>, { title: string; hint: string; placeholder: string }> = {
  editor: {
    title: 'AI editor',
    hint: 'Tell the editor how to cut your video: order, transitions, pacing and captions.',
    placeholder: 'e.g. Calm and elegant, slow fades, captions with the address',
  },
  aesthetic: {
    title: 'Aesthetic',
    hint: 'Describe the look and feel: the aesthetic, the energy and the copy style.',
    placeholder: 'e.g. Luxury and moody, energetic, bold copy',
  },
};

function errorText(err: unknown): string {
  return hasStatus(err, 401) ? ASSEMBLY_MSG.authRequired : apiErrorMessage(err, CHAT_FAILED);
}

interface AssemblyChatProps {
  mode: Exclude<AssemblyMode, 'selector'>;
  projectId: string | null;
  selectedClips: readonly AssemblyClip[];
  aspectRatio: string | null;
  /** the chat's latest state (its editing config changes the dry run) */
  onState: (state: AestheticChatState | null) => void;
  /** the order the chat suggests, applied by the user */
  onApplyOrder: (order: string[]) => void;
  /** a state the page got elsewhere (the music picker's answer): shown as the chat's own */
  external?: AestheticChatState | null;
  /** the workspace's music tracks by id, for the music line in words */
  trackNames?: ReadonlyMap<string, string>;
}

/** The AI chat of Video Assembly (editor or aesthetic mode), kept per project by the server. */
export function AssemblyChat({ mode, projectId, selectedClips, aspectRatio, onState, onApplyOrder, external = null, trackNames }: AssemblyChatProps): ReactElement {
  const [state, setState] = useState<AestheticChatState | null>(null);
  const [history, setHistory] = useState<ChatHistoryMessage[]>([]);
  const [loadError, setLoadError] = useState<string | null>(null);
  const [input, setInput] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [sending, setSending] = useState<string | null>(null);
  const listRef = useRef<HTMLOListElement>(null);
  // each request to the chat takes a number: only the latest one's answer is shown
  const latestRequest = useRef(0);
  const onStateRef = useRef(onState);
  onStateRef.current = onState;
  const intro = INTRO[mode];

  useEffect(() => {
    setState(null);
    setHistory([]);
    setLoadError(null);
    setError(null);
    onStateRef.current(null);
    if (!projectId) return;
    let live = true;
    fetchChatState(projectId).then(
      (next) => {
        if (!live) return;
        setState(next);
        setHistory(next.chat_history);
        onStateRef.current(next);
      },
      (err: unknown) => live && setLoadError(errorText(err)),
    );
    return () => {
      live = false;
    };
  }, [projectId]);

  useEffect(() => {
    if (!external) return;
    setState(external);
    setHistory(external.chat_history);
  }, [external]);

  useEffect(() => {
    const list = listRef.current;
    if (list) list.scrollTop = list.scrollHeight;
  }, [history, sending]);

  // the selection follows the page: whenever it differs from the one the chat knows, the chat is told (no message),
  // so what is still needed and the suggested order are never those of an earlier selection
  const selectedIds = selectedClips.map((c) => c.id);
  const selectedKey = selectedIds.join(',');
  const knownKey = state ? state.preferences.clip_selection.order.join(',') : null;
  useEffect(() => {
    if (!projectId || knownKey === null || sending !== null) return;
    const selected = selectedKey ? selectedKey.split(',') : [];
    if (!selectionOutOfSync(knownKey ? knownKey.split(',') : [], selected)) return;
    const controller = new AbortController();
    const timer = window.setTimeout(() => {
      const request = ++latestRequest.current;
      syncChatSelection(projectId, selected, controller.signal).then(
        (next) => {
          if (request !== latestRequest.current) return;
          setState(next);
          setHistory(next.chat_history);
          onStateRef.current(next);
        },
        (err: unknown) => {
          if (!controller.signal.aborted && request === latestRequest.current) setError(errorText(err));
        },
      );
    }, SELECTION_SYNC_DEBOUNCE_MS);
    return () => {
      window.clearTimeout(timer);
      controller.abort();
    };
  }, [projectId, knownKey, selectedKey, sending]);

  async function send(message: string, options: { typed: boolean }): Promise<void> {
    if (!projectId || sending) return;
    const before = history;
    if (options.typed) {
      setHistory(withPendingMessage(history, message, new Date()));
      setInput('');
    }
    setSending(message);
    setError(null);
    const request = ++latestRequest.current;
    try {
      const next = await sendChatMessage(projectId, { message, chatHistory: before, selectedClips, aspectRatio });
      if (request !== latestRequest.current) return;
      setState(next);
      setHistory(next.chat_history);
      onState(next);
    } catch (err) {
      // the spec: a failed message removes the user's message and restores the input text
      if (options.typed) {
        const restored = afterFailedMessage(withPendingMessage(before, message, new Date()), message);
        setHistory(restored.history);
        setInput(restored.input);
      }
      setError(errorText(err));
    } finally {
      setSending(null);
    }
  }

  function onSubmit(event: FormEvent): void {
    event.preventDefault();
    const checked = checkChatMessage(input);
    if ('error' in checked) {
      setError(checked.error);
      return;
    }
    void send(checked.message, { typed: true });
  }

  function onKeyDown(event: KeyboardEvent<HTMLTextAreaElement>): void {
    if (event.key === 'Enter' && !event.shiftKey && !event.nativeEvent.isComposing) {
      event.preventDefault();
      event.currentTarget.form?.requestSubmit();
    }
  }

  const shown = visibleMessages(history);
  const order = state ? suggestedOrder(state.clip_suggestions, selectedIds) : null;
  const nameOf = (id: string) => {
    const clip = selectedClips.find((c) => c.id === id);
    return clip ? clipName(clip) : 'A clip not selected now';
  };

  return (
    <section className="panel assembly-chat" aria-labelledby="assembly-chat-title">
      <header className="assembly-panel-head">
        <h2 id="assembly-chat-title">
          <Icon name="sparkles" size={18} /> {intro.title}
        </h2>
        {projectId && (
          <div className="assembly-chat-actions">
            <button type="button" className="button button-ghost" disabled={sending !== null || state === null} onClick={() => void send(CHAT_CLEAR_CONVERSATION, { typed: false })}>
              Clear conversation
            </button>
          </div>
        )}
      </header>
      <p className="muted">{intro.hint}</p>

      {!projectId && <p className="muted">Choose the project to save into: the conversation is kept with it.</p>}
      {projectId && !state && !loadError && <LoadingState label="Loading conversation..." />}
      {loadError && (
        <div className="form-error" role="alert">
          {loadError}
        </div>
      )}

      {projectId && state && (
        <>
          {/* focusable: a long conversation scrolls, and keyboards must be able to scroll it */}
          <ol ref={listRef} className="chat-messages" aria-label="Conversation" aria-live="polite" tabIndex={0}>
            {shown.length === 0 && <li className="chat-empty muted">No messages yet.</li>}
            {shown.map((m, i) => (
              <li key={`${m.timestamp}:${i}`} className={`chat-message chat-message-${m.role}`}>
                <span className="visually-hidden">{m.role === 'user' ? 'You:' : 'Assistant:'} </span>
                {m.content}
              </li>
            ))}
            {sending && (
              <li className="chat-message chat-message-assistant chat-typing">
                <span className="visually-hidden">The assistant is replying</span>
                <span aria-hidden="true">…</span>
              </li>
            )}
          </ol>

          <ChatSuggestions mode={mode} state={state} selectedCount={selectedIds.length} nameOf={nameOf} order={order} onApplyOrder={onApplyOrder} trackNames={trackNames} />
        </>
      )}

      {error && (
        <div className="form-error" role="alert">
          {error}
        </div>
      )}
      {projectId && (
        <form className="chat-form" onSubmit={onSubmit}>
          <label htmlFor="assembly-chat-input" className="visually-hidden">
            Message to the assistant
          </label>
          <textarea
            className="control"
            id="assembly-chat-input"
            rows={2}
            value={input}
            maxLength={2000}
            placeholder={intro.placeholder}
            onChange={(e) => {
              setInput(e.target.value);
              if (error) setError(null);
            }}
            onKeyDown={onKeyDown}
          />
          <button type="submit" className="button button-primary" disabled={sending !== null || state === null}>
            <Icon name="send" size={18} /> {sending ? 'Sending...' : 'Send'}
          </button>
        </form>
      )}
    </section>
  );
}

function ChatSuggestions({
  mode,
  state,
  selectedCount,
  nameOf,
  order,
  onApplyOrder,
  trackNames,
}: {
  mode: Exclude<AssemblyMode, 'selector'>;
  trackNames?: ReadonlyMap<string, string>;
  state: AestheticChatState;
  /** clips selected on the page now (the chat may not have been told yet) */
  selectedCount: number;
  nameOf: (id: string) => string;
  order: string[] | null;
  onApplyOrder: (order: string[]) => void;
}): ReactElement {
  const { preferences, analysis } = state;
  const needed = stillNeeded(analysis.missing_info, selectedCount);
  // ready once nothing is needed, unless the assistant held back for a reason it did not list
  const ready = needed.length === 0 && (analysis.ready_to_create || analysis.missing_info.length > 0);
  const config = editingConfigSummary(state.editing_config, trackNames);
  const prefs = [
    { label: CHAT_FIELDS.aesthetic.label, value: preferences.aesthetic },
    { label: CHAT_FIELDS.energy_level.label, value: preferences.energy_level },
    { label: CHAT_FIELDS.copy_style.label, value: preferences.copy_style },
  ];
  const configFacts = (
    <dl className="facts chat-facts" aria-label="Editing config">
      {config.map((line) => (
        <div key={line.label}>
          <dt>{line.label}</dt>
          <dd>{line.value}</dd>
        </div>
      ))}
    </dl>
  );
  const prefFacts = (
    <dl className="facts chat-facts" aria-label="Preferences">
      {prefs.map((line) => (
        <div key={line.label}>
          <dt>{line.label}</dt>
          <dd>{line.value ?? 'not yet known'}</dd>
        </div>
      ))}
    </dl>
  );
  return (
    <div className="chat-suggestions" aria-label="Suggestions">
      <p className="chat-readiness">
        {ready ? <strong>Ready to create</strong> : <strong>Needs more detail</strong>} · confidence {Math.round(analysis.confidence_score * 100)}%
      </p>
      {needed.length > 0 && (
        <div>
          <h3>Still needed</h3>
          <ul className="chat-missing">
            {needed.map((key) => (
              <li key={key}>
                <strong>{chatFieldLabel(key)}</strong>
                {CHAT_FIELDS[key] && <span className="muted">: {CHAT_FIELDS[key].hint}</span>}
              </li>
            ))}
          </ul>
        </div>
      )}
      {mode === 'editor' ? configFacts : prefFacts}
      {mode === 'aesthetic' && preferences.generated_texts.length > 0 && (
        <div>
          <h3>Suggested copy</h3>
          <ul className="chat-texts">
            {preferences.generated_texts.map((text) => (
              <li key={text}>{text}</li>
            ))}
          </ul>
        </div>
      )}
      {state.clip_suggestions.length > 0 && (
        <div>
          <h3>Suggested order</h3>
          <ol className="chat-clip-suggestions">
            {[...state.clip_suggestions]
              .sort((a, b) => a.position - b.position)
              .map((s) => (
                <li key={`${s.clip_id}:${s.position}`}>
                  <strong>{nameOf(s.clip_id)}</strong> <span className="muted">{s.reason}</span>
                </li>
              ))}
          </ol>
          {order && (
            <button type="button" className="button button-secondary" onClick={() => onApplyOrder(order)}>
              Use suggested order
            </button>
          )}
        </div>
      )}
      {mode === 'aesthetic' ? configFacts : null}
    </div>
  );
}
