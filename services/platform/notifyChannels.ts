/**
 * NOTIFY channels that more than one part of the API LISTENs on. `rs_auth_changed` carries a user id and is sent on
 * commit by the database's triggers (db/migrations/20261124000600_auth_change_notify.ts) whenever what that user's
 * session tokens stand for may have changed: a session ended or changed, the user's e-mail, role or deletion mark
 * changed, the user or their profile removed. The session cache drops the user's entries on it; the realtime hub
 * has each of the user's open event streams re-check its session.
 */
export const AUTH_CHANGED_CHANNEL = 'rs_auth_changed';
