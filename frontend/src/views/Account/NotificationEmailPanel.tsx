import { useSetAtom } from 'jotai';
import { useEffect, useState, type ReactElement } from 'react';
import { NOTIFICATION_EMAIL_CHOICES, NOTIFICATION_EMAIL_LABELS, type NotificationEmailChoice } from '../../../../domain/notifications';
import { apiErrorMessage } from '../../api/client';
import { fetchNotificationEmail, setNotificationEmail } from '../../api/notifications';
import { showToastAtom } from '../../atoms/toast';

/** How the person hears of notifications by e-mail (with SMTP set up): each, a daily digest, or none. */
export function NotificationEmailPanel(): ReactElement {
  const toast = useSetAtom(showToastAtom);
  const [choice, setChoice] = useState<NotificationEmailChoice | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [saving, setSaving] = useState(false);

  useEffect(() => {
    let live = true;
    fetchNotificationEmail().then(
      (email) => live && setChoice(email),
      (err) => live && setError(apiErrorMessage(err, 'Could not load your notification settings.')),
    );
    return () => {
      live = false;
    };
  }, []);

  async function choose(next: NotificationEmailChoice): Promise<void> {
    const before = choice;
    setChoice(next);
    setSaving(true);
    setError(null);
    try {
      await setNotificationEmail(next);
      toast({ kind: 'success', message: `Notification e-mail: ${NOTIFICATION_EMAIL_LABELS[next].toLowerCase()}.` });
    } catch (err) {
      setChoice(before);
      setError(apiErrorMessage(err, 'Could not save your choice. Please try again.'));
    } finally {
      setSaving(false);
    }
  }

  return (
    <section className="panel setting-row" aria-labelledby="notification-email-heading">
      <div className="setting-text">
        <h2 id="notification-email-heading">Notification e-mails</h2>
        <p className="muted">Mentions, approvals you are asked for, decisions and comments on items you started, and replies to your comments. The bell shows them either way.</p>
      </div>
      <fieldset className="notification-email-choices" disabled={choice === null || saving}>
        <legend className="visually-hidden">E-mail me</legend>
        {NOTIFICATION_EMAIL_CHOICES.map((c) => (
          <label key={c} className="radio-row">
            <input type="radio" name="notification-email" value={c} checked={choice === c} onChange={() => void choose(c)} /> {NOTIFICATION_EMAIL_LABELS[c]}
          </label>
        ))}
      </fieldset>
      {error && (
        <p className="form-error" role="alert">
          {error}
        </p>
      )}
    </section>
  );
}
