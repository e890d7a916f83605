import { useState, type FormEvent } from 'react';
import { apiErrorMessage } from '../api/client';
import { SOMETHING_WENT_WRONG } from './useLoad';

/**
 * A settings form's submit: `busy` while the call runs, the API's refusal as `error` (shown under the form), and
 * `onDone` with the answer when it worked. The form stays as typed on failure.
 */
export function useFormSubmit<T>(action: () => Promise<T>, onDone: (answer: T) => void): { busy: boolean; error: string | null; submit: (event: FormEvent<HTMLFormElement>) => void } {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  async function run(): Promise<void> {
    setBusy(true);
    setError(null);
    try {
      onDone(await action());
    } catch (err) {
      setError(apiErrorMessage(err, SOMETHING_WENT_WRONG));
    } finally {
      setBusy(false);
    }
  }
  return {
    busy,
    error,
    submit: (event) => {
      event.preventDefault();
      if (!busy) void run();
    },
  };
}
