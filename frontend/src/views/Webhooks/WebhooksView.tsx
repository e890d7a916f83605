import { useAtomValue, useSetAtom } from 'jotai';
import { useCallback, useEffect, useState, type FormEvent, type ReactElement } from 'react';
import { webhookUrlHint } from '../../../../domain/webhookEndpoints';
import { WEBHOOK_EVENT_DESCRIPTIONS, WEBHOOK_EVENT_TYPES, type WebhookEventType } from '../../../../domain/webhooks';
import { ROLE_LABELS, roleAllows, type WorkspaceRole } from '../../../../domain/workspaceRoles';
import { apiErrorMessage } from '../../api/client';
import {
  createEndpoint,
  deleteEndpoint,
  fetchDeliveries,
  fetchDelivery,
  fetchEndpoints,
  redeliver,
  rotateEndpointSecret,
  sendTestEvent,
  updateEndpoint,
  type WebhookAttempt,
  type WebhookDelivery,
  type WebhookEndpointView,
  type WebhookTargetRule,
} from '../../api/webhooks';
import { showToastAtom } from '../../atoms/toast';
import { webhookChangeAtom } from '../../atoms/webhooks';
import { currentWorkspaceAtom, type CurrentWorkspace } from '../../atoms/workspace';
import { ConfirmDeleteDialog } from '../../components/ConfirmDeleteDialog';
import { Dialog } from '../../components/Dialog';
import { LoadingState } from '../../components/Spinner';
import { TextField } from '../../components/TextField';
import { SOMETHING_WENT_WRONG, useLoad, type Load } from '../../components/useLoad';
import './webhooks.css';

const TIME_FORMAT = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
/** While a delivery waits for its first answer, the log reads again this often. */
const PENDING_REFRESH_MS = 2000;
/** Attempts recorded in a burst (the event stream says each) read the log once. */
const LIVE_DEBOUNCE_MS = 300;


function LoadError({ message, onRetry }: { message: string; onRetry: () => void }): ReactElement {
  return (
    <div role="alert" className="webhooks-message">
      <p>{message}</p>
      <button type="button" className="button button-secondary" onClick={onRetry}>
        Try again
      </button>
    </div>
  );
}

function ActionError({ message }: { message: string | null }): ReactElement | null {
  if (!message) return null;
  return (
    <p className="form-error" role="alert">
      {message}
    </p>
  );
}

/**
 * Workspace -> Webhooks (admins and owners): the workspace's endpoints, registering one (the signing secret shown
 * once), changing, turning off and on, rotating the secret, deleting; and per endpoint its delivery log with each
 * attempt's request and response, "Send again" and "Send test event".
 */
export function WebhooksView(): ReactElement {
  const workspace = useAtomValue(currentWorkspaceAtom);
  if (!workspace?.role) return <LoadingState label="Loading webhooks..." />;
  if (!roleAllows(workspace.role, 'webhooks')) {
    return (
      <section className="view" aria-labelledby="webhooks-title">
        <header className="view-header">
          <h1 id="webhooks-title">Webhooks</h1>
        </header>
        <p className="notice-info role-note" role="note">
          Only admins and owners manage webhooks. Your role in {workspace.name ?? 'this workspace'} is {ROLE_LABELS[workspace.role]}.
        </p>
      </section>
    );
  }
  return <Webhooks workspace={workspace as CurrentWorkspace & { role: WorkspaceRole }} />;
}

type Confirm = { kind: 'delete'; endpoint: WebhookEndpointView } | { kind: 'rotate'; endpoint: WebhookEndpointView };

function Webhooks({ workspace }: { workspace: CurrentWorkspace & { role: WorkspaceRole } }): ReactElement {
  const toast = useSetAtom(showToastAtom);
  // an endpoint disabled by delivery (410, failing for days) shows as such at once
  const disabledSeen = useAtomValue(webhookChangeAtom);
  const disabledEvents = disabledSeen.change === 'disabled' ? disabledSeen.n : 0;
  const readEndpoints = useCallback(() => fetchEndpoints(workspace.id), [workspace.id, disabledEvents]);
  const [listed, reload] = useLoad(readEndpoints);
  const endpoints: Load<WebhookEndpointView[]> = listed.status === 'done' ? { status: 'done', data: listed.data.endpoints } : listed;
  const targetRule = listed.status === 'done' ? listed.data.targetRule : null;
  const [editing, setEditing] = useState<WebhookEndpointView | 'new' | null>(null);
  const [secret, setSecret] = useState<{ title: string; secret: string; note: string } | null>(null);
  const [confirm, setConfirm] = useState<Confirm | null>(null);
  // `?endpoint=<id>` (the link in the e-mail about a disabled endpoint) opens that endpoint's log
  const [openLog, setOpenLog] = useState<string | null>(() => new URLSearchParams(window.location.search).get('endpoint'));
  const [listError, setListError] = useState<string | null>(null);

  async function toggle(endpoint: WebhookEndpointView) {
    setListError(null);
    try {
      await updateEndpoint(workspace.id, endpoint.id, { enabled: endpoint.status !== 'enabled' });
      toast({ kind: 'success', message: endpoint.status === 'enabled' ? 'The endpoint is turned off.' : 'The endpoint is turned on.' });
    } catch (error) {
      setListError(apiErrorMessage(error, SOMETHING_WENT_WRONG));
    }
    await reload();
  }

  async function confirmed() {
    if (!confirm) return;
    setListError(null);
    try {
      if (confirm.kind === 'delete') {
        await deleteEndpoint(workspace.id, confirm.endpoint.id);
        toast({ kind: 'success', message: 'The endpoint was deleted.' });
        if (openLog === confirm.endpoint.id) setOpenLog(null);
      } else {
        const rotated = await rotateEndpointSecret(workspace.id, confirm.endpoint.id);
        setSecret({
          title: 'New signing secret',
          secret: rotated.secret,
          note: `The previous secret keeps signing until ${TIME_FORMAT.format(new Date(rotated.previousSecretExpiresAt))}, so switch your receiver before then.`,
        });
      }
    } catch (error) {
      setListError(apiErrorMessage(error, SOMETHING_WENT_WRONG));
    }
    setConfirm(null);
    await reload();
  }

  return (
    <section className="view webhooks-view" aria-labelledby="webhooks-title">
      <header className="view-header">
        <div>
          <h1 id="webhooks-title">Webhooks</h1>
          <p className="muted webhooks-lede">
            Send events from {workspace.name ?? 'this workspace'} to your own tools. Each request is signed (Standard Webhooks) with the endpoint&apos;s secret.
          </p>
        </div>
        <button type="button" className="button button-primary" onClick={() => setEditing('new')}>
          Add endpoint
        </button>
      </header>

      <section className="panel" aria-labelledby="endpoint-list-title">
        <h2 id="endpoint-list-title">Endpoints</h2>
        <ActionError message={listError} />
        {endpoints.status === 'loading' && <LoadingState label="Loading endpoints..." />}
        {endpoints.status === 'error' && <LoadError message={endpoints.message} onRetry={() => void reload()} />}
        {endpoints.status === 'done' && endpoints.data.length === 0 && (
          <p className="muted">No endpoints yet. Add one to receive events such as a finished clip or an item waiting for approval.</p>
        )}
        {endpoints.status === 'done' && endpoints.data.length > 0 && (
          <ul className="endpoint-list" aria-label="Endpoints">
            {endpoints.data.map((endpoint) => (
              <li key={endpoint.id} className="endpoint-row">
                <div className="endpoint-head">
                  <div className="endpoint-who">
                    <p className="endpoint-url">{endpoint.url}</p>
                    {endpoint.description && <p className="muted">{endpoint.description}</p>}
                    <p className="endpoint-meta muted">
                      <span className={`endpoint-status status-${endpoint.status}`}>{endpoint.status === 'enabled' ? 'On' : 'Off'}</span> · {endpoint.eventTypes.join(', ')} · secret{' '}
                      <code>{endpoint.secretPrefix}…</code>
                    </p>
                    {endpoint.status === 'disabled' && endpoint.disabledReason && <p className="endpoint-disabled">{endpoint.disabledReason}</p>}
                  </div>
                  <div className="endpoint-controls">
                    <button
                      type="button"
                      className="button button-secondary"
                      aria-expanded={openLog === endpoint.id}
                      aria-controls={`log-${endpoint.id}`}
                      onClick={() => setOpenLog(openLog === endpoint.id ? null : endpoint.id)}
                    >
                      Deliveries<span className="visually-hidden"> to {endpoint.url}</span>
                    </button>
                    <button type="button" className="button button-ghost" onClick={() => setEditing(endpoint)}>
                      Edit<span className="visually-hidden"> {endpoint.url}</span>
                    </button>
                    <button type="button" className="button button-ghost" onClick={() => void toggle(endpoint)}>
                      {endpoint.status === 'enabled' ? 'Turn off' : 'Turn on'}
                      <span className="visually-hidden"> {endpoint.url}</span>
                    </button>
                    <button type="button" className="button button-ghost" onClick={() => setConfirm({ kind: 'rotate', endpoint })}>
                      Rotate secret<span className="visually-hidden"> of {endpoint.url}</span>
                    </button>
                    <button type="button" className="button button-ghost" onClick={() => setConfirm({ kind: 'delete', endpoint })}>
                      Delete<span className="visually-hidden"> {endpoint.url}</span>
                    </button>
                  </div>
                </div>
                {openLog === endpoint.id && <DeliveryLog workspaceId={workspace.id} endpoint={endpoint} />}
              </li>
            ))}
          </ul>
        )}
      </section>

      {editing && (
        <EndpointDialog
          workspaceId={workspace.id}
          targetRule={targetRule}
          endpoint={editing === 'new' ? null : editing}
          onClose={() => setEditing(null)}
          onSaved={(created) => {
            setEditing(null);
            if (created) {
              setSecret({ title: 'Endpoint added', secret: created.secret, note: 'Copy the signing secret now: it is not shown again. Your receiver verifies each request with it.' });
              setOpenLog(created.endpoint.id);
            } else toast({ kind: 'success', message: 'The endpoint was saved.' });
            void reload();
          }}
        />
      )}
      {secret && <SecretDialog {...secret} onClose={() => setSecret(null)} />}
      {confirm?.kind === 'delete' && (
        <ConfirmDeleteDialog title="Delete endpoint?" onCancel={() => setConfirm(null)} onConfirm={confirmed}>
          {confirm.endpoint.url} stops receiving events and its delivery log is deleted. This cannot be undone.
        </ConfirmDeleteDialog>
      )}
      {confirm?.kind === 'rotate' && (
        <ConfirmDeleteDialog title="Rotate signing secret?" confirmLabel="Rotate" busyLabel="Rotating..." onCancel={() => setConfirm(null)} onConfirm={confirmed}>
          A new secret signs every delivery from now on. The current one keeps signing too for 24 hours, so your receiver can switch without
          missing an event.
        </ConfirmDeleteDialog>
      )}
    </section>
  );
}

function EndpointDialog({
  workspaceId,
  targetRule,
  endpoint,
  onClose,
  onSaved,
}: {
  workspaceId: string;
  /** null until the list answered: the hint then says only what every server accepts */
  targetRule: WebhookTargetRule | null;
  endpoint: WebhookEndpointView | null;
  onClose: () => void;
  onSaved: (created: { endpoint: WebhookEndpointView; secret: string } | null) => void;
}): ReactElement {
  const [url, setUrl] = useState(endpoint?.url ?? '');
  const [description, setDescription] = useState(endpoint?.description ?? '');
  const [types, setTypes] = useState<WebhookEventType[]>(endpoint?.eventTypes ?? []);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const input = { url: url.trim(), description: description.trim(), eventTypes: types };
      if (endpoint) {
        await updateEndpoint(workspaceId, endpoint.id, input);
        onSaved(null);
      } else onSaved(await createEndpoint(workspaceId, input));
    } catch (err) {
      setError(apiErrorMessage(err, SOMETHING_WENT_WRONG));
      setBusy(false);
    }
  }

  const toggleType = (type: WebhookEventType, on: boolean) => setTypes((current) => (on ? [...current, type] : current.filter((t) => t !== type)));

  return (
    <Dialog title={endpoint ? 'Edit endpoint' : 'Add endpoint'} onClose={onClose} className="endpoint-dialog">
      <form className="endpoint-form" onSubmit={(e) => void submit(e)} aria-label={endpoint ? 'Edit endpoint' : 'Add endpoint'}>
        <TextField
          label="Endpoint URL"
          type="url"
          name="webhook-url"
          autoComplete="off"
          required
          placeholder="https://example.com/webhooks"
          hint={webhookUrlHint(targetRule ?? { loopback: false, privateAddresses: false })}
          value={url}
          onChange={(e) => setUrl(e.target.value)}
        />
        <TextField label="Description (optional)" name="webhook-description" maxLength={500} value={description} onChange={(e) => setDescription(e.target.value)} />
        <fieldset className="event-types">
          <legend>Events to send</legend>
          <div className="event-type-actions">
            <button type="button" className="button button-ghost" onClick={() => setTypes([...WEBHOOK_EVENT_TYPES])}>
              Select all
            </button>
            <button type="button" className="button button-ghost" onClick={() => setTypes([])}>
              Clear
            </button>
          </div>
          {WEBHOOK_EVENT_TYPES.map((type) => (
            <label key={type} className="event-type">
              <input type="checkbox" checked={types.includes(type)} onChange={(e) => toggleType(type, e.target.checked)} />
              <span>
                <code>{type}</code>
                <span className="muted event-type-what">{WEBHOOK_EVENT_DESCRIPTIONS[type]}</span>
              </span>
            </label>
          ))}
        </fieldset>
        <ActionError message={error} />
        <div className="form-actions">
          <button type="button" className="button button-secondary" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" className="button button-primary" disabled={busy}>
            {busy ? 'Saving...' : endpoint ? 'Save' : 'Add endpoint'}
          </button>
        </div>
      </form>
    </Dialog>
  );
}

function SecretDialog({ title, secret, note, onClose }: { title: string; secret: string; note: string; onClose: () => void }): ReactElement {
  const toast = useSetAtom(showToastAtom);
  async function copy() {
    try {
      await navigator.clipboard.writeText(secret);
      toast({ kind: 'success', message: 'Copied to clipboard!' });
    } catch {
      toast({ kind: 'error', message: 'Could not copy: select the secret and copy it yourself.' });
    }
  }
  return (
    <Dialog title={title} onClose={onClose}>
      <p>{note}</p>
      <div className="field">
        <label htmlFor="webhook-secret">Signing secret</label>
        <input id="webhook-secret" className="secret-value" readOnly value={secret} onFocus={(e) => e.target.select()} />
      </div>
      <div className="form-actions">
        <button type="button" className="button button-secondary" onClick={() => void copy()}>
          Copy secret
        </button>
        <button type="button" className="button button-primary" onClick={onClose}>
          Done
        </button>
      </div>
    </Dialog>
  );
}

function statusText(delivery: { status: WebhookDelivery['status']; lastStatusCode: number | null; lastError: string | null }): string {
  const answer = delivery.lastStatusCode !== null ? `HTTP ${delivery.lastStatusCode}` : (delivery.lastError ?? 'no answer yet');
  if (delivery.status === 'succeeded') return `Delivered (${answer})`;
  if (delivery.status === 'failed') return `Failed (${answer})`;
  return delivery.lastStatusCode === null && !delivery.lastError ? 'Sending...' : `Retrying (${answer})`;
}

function DeliveryLog({ workspaceId, endpoint }: { workspaceId: string; endpoint: WebhookEndpointView }): ReactElement {
  const toast = useSetAtom(showToastAtom);
  const [pages, setPages] = useState<Load<{ deliveries: WebhookDelivery[]; nextCursor: string | null }>>({ status: 'loading' });
  const [expanded, setExpanded] = useState<string | null>(null);
  const [actionError, setActionError] = useState<string | null>(null);
  const [busy, setBusy] = useState<string | null>(null);

  const load = useCallback(async () => {
    try {
      setPages({ status: 'done', data: await fetchDeliveries(workspaceId, endpoint.id) });
    } catch (error) {
      setPages({ status: 'error', message: apiErrorMessage(error, SOMETHING_WENT_WRONG) });
    }
  }, [workspaceId, endpoint.id]);
  useEffect(() => {
    void load();
  }, [load]);

  // an attempt recorded for this endpoint (from the workspace's event stream): the log reads again
  const change = useAtomValue(webhookChangeAtom);
  useEffect(() => {
    if (change.endpointId !== endpoint.id || change.change !== 'deliveries') return;
    // a burst of attempts reads the log once
    const timer = window.setTimeout(() => void load(), LIVE_DEBOUNCE_MS);
    return () => window.clearTimeout(timer);
  }, [change, endpoint.id, load]);

  // while something waits for its first answer, the log follows it (also without the event stream)
  const waiting = endpoint.status === 'enabled' && pages.status === 'done' && pages.data.deliveries.some((d) => d.status === 'pending' && d.attempts === 0);
  useEffect(() => {
    if (!waiting) return;
    const timer = window.setInterval(() => void load(), PENDING_REFRESH_MS);
    return () => window.clearInterval(timer);
  }, [waiting, load]);

  async function more() {
    if (pages.status !== 'done' || !pages.data.nextCursor) return;
    try {
      const next = await fetchDeliveries(workspaceId, endpoint.id, pages.data.nextCursor);
      setPages({ status: 'done', data: { deliveries: [...pages.data.deliveries, ...next.deliveries], nextCursor: next.nextCursor } });
    } catch (error) {
      setActionError(apiErrorMessage(error, SOMETHING_WENT_WRONG));
    }
  }

  async function act(what: 'test' | 'again', deliveryId?: string) {
    setActionError(null);
    setBusy(deliveryId ?? what);
    try {
      if (what === 'test') await sendTestEvent(workspaceId, endpoint.id);
      else await redeliver(workspaceId, endpoint.id, deliveryId as string);
      toast({ kind: 'success', message: what === 'test' ? 'Test event queued.' : 'The event will be sent again.' });
      await load();
    } catch (error) {
      setActionError(apiErrorMessage(error, SOMETHING_WENT_WRONG));
    } finally {
      setBusy(null);
    }
  }

  return (
    <section id={`log-${endpoint.id}`} className="delivery-log" aria-label={`Deliveries to ${endpoint.url}`}>
      <div className="delivery-log-head">
        <h3>Recent deliveries</h3>
        <div className="delivery-log-actions">
          <button type="button" className="button button-ghost" onClick={() => void load()}>
            Refresh
          </button>
          <button type="button" className="button button-secondary" disabled={busy === 'test'} onClick={() => void act('test')}>
            {busy === 'test' ? 'Sending...' : 'Send test event'}
          </button>
        </div>
      </div>
      <ActionError message={actionError} />
      {pages.status === 'loading' && <LoadingState label="Loading deliveries..." />}
      {pages.status === 'error' && <LoadError message={pages.message} onRetry={() => void load()} />}
      {pages.status === 'done' && pages.data.deliveries.length === 0 && <p className="muted">Nothing sent yet. Send a test event to try your receiver.</p>}
      {pages.status === 'done' && pages.data.deliveries.length > 0 && (
        <ul className="delivery-list" aria-label="Deliveries">
          {pages.data.deliveries.map((delivery) => (
            <li key={delivery.id} className={`delivery-row delivery-${delivery.status}`}>
              <button
                type="button"
                className="delivery-summary"
                aria-expanded={expanded === delivery.id}
                aria-controls={`delivery-${delivery.id}`}
                onClick={() => setExpanded(expanded === delivery.id ? null : delivery.id)}
              >
                <code className="delivery-event">{delivery.eventType}</code>
                {delivery.redeliveryOf && <span className="delivery-resent">Re-sent</span>}
                <span className="delivery-status">{statusText(delivery)}</span>
                <span className="delivery-facts muted">
                  {delivery.attempts} {delivery.attempts === 1 ? 'attempt' : 'attempts'}
                  {delivery.lastLatencyMs !== null && ` · ${delivery.lastLatencyMs} ms`} · {TIME_FORMAT.format(new Date(delivery.createdAt))}
                  {delivery.status === 'pending' && delivery.nextAttemptAt && ` · next try ${TIME_FORMAT.format(new Date(delivery.nextAttemptAt))}`}
                </span>
              </button>
              {expanded === delivery.id && (
                <DeliveryDetail
                  id={`delivery-${delivery.id}`}
                  workspaceId={workspaceId}
                  endpointId={endpoint.id}
                  delivery={delivery}
                  busy={busy === delivery.id}
                  onSendAgain={() => void act('again', delivery.id)}
                />
              )}
            </li>
          ))}
        </ul>
      )}
      {pages.status === 'done' && pages.data.nextCursor && (
        <button type="button" className="button button-ghost" onClick={() => void more()}>
          Show older deliveries
        </button>
      )}
    </section>
  );
}

function DeliveryDetail({
  id,
  workspaceId,
  endpointId,
  delivery,
  busy,
  onSendAgain,
}: {
  id: string;
  workspaceId: string;
  endpointId: string;
  delivery: WebhookDelivery;
  busy: boolean;
  onSendAgain: () => void;
}): ReactElement {
  const read = useCallback(() => fetchDelivery(workspaceId, endpointId, delivery.id), [workspaceId, endpointId, delivery.id, delivery.attempts, delivery.status]);
  const [detail, reload] = useLoad(read);
  return (
    <div id={id} className="delivery-detail">
      {delivery.redeliveryOf && (
        <p className="delivery-resent-note">
          A re-send (&quot;Send again&quot;) of the delivery of {TIME_FORMAT.format(new Date(delivery.redeliveryOf.createdAt))}, with the same event id.
        </p>
      )}
      <p className="muted">
        Event id <code>{delivery.eventId}</code> (the <code>webhook-id</code> header)
      </p>
      <button type="button" className="button button-secondary" disabled={busy} onClick={onSendAgain}>
        {busy ? 'Sending...' : 'Send again'}
      </button>
      {detail.status === 'loading' && <LoadingState label="Loading attempts..." />}
      {detail.status === 'error' && <LoadError message={detail.message} onRetry={() => void reload()} />}
      {detail.status === 'done' && detail.data.attempts.length === 0 && (
        <>
          <p className="muted">No attempt yet.</p>
          {detail.data.delivery.requestBody && <Body label="Request body" text={detail.data.delivery.requestBody} />}
        </>
      )}
      {detail.status === 'done' && detail.data.attempts.length > 0 && (
        <ol className="attempt-list" aria-label="Attempts">
          {detail.data.attempts.map((attempt: WebhookAttempt, i) => (
            <li key={`${attempt.attemptedAt}-${i}`} className="attempt">
              <p className="attempt-head">
                <strong>Attempt {i + 1}</strong> · {TIME_FORMAT.format(new Date(attempt.attemptedAt))} ·{' '}
                {attempt.statusCode !== null ? `HTTP ${attempt.statusCode}` : (attempt.error ?? 'no answer')}
                {attempt.latencyMs !== null && ` · ${attempt.latencyMs} ms`}
              </p>
              {attempt.statusCode !== null && attempt.error && <p className="muted">{attempt.error}</p>}
              {attempt.requestBody && <Body label="Request body" text={attempt.requestBody} />}
              {attempt.responseBody && <Body label="Response body" text={attempt.responseBody} />}
            </li>
          ))}
        </ol>
      )}
    </div>
  );
}

/** JSON laid out for reading; a body cut short for the log (or not JSON) as it is. */
function readable(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

function Body({ label, text }: { label: string; text: string }): ReactElement {
  return (
    <div className="delivery-body">
      <p className="delivery-body-label">{label}</p>
      <pre tabIndex={0} aria-label={label}>
        {readable(text)}
      </pre>
    </div>
  );
}
