import { useCallback, useEffect, useState } from 'react';
import { apiErrorMessage } from '../api/client';

/** The fallback text for a failure the server did not describe. */
export const SOMETHING_WENT_WRONG = 'Something went wrong. Please try again.';

/** A list or record read from the API: loading, loaded, or failed with the text to show. */
export type Load<T> = { status: 'loading' } | { status: 'done'; data: T } | { status: 'error'; message: string };

/**
 * Reads with `read` when it changes (keep it stable with useCallback) and answers its state and a function that reads
 * again. A failure becomes the server's message, else SOMETHING_WENT_WRONG.
 */
export function useLoad<T>(read: () => Promise<T>): [Load<T>, () => Promise<void>] {
  const [state, setState] = useState<Load<T>>({ status: 'loading' });
  const load = useCallback(async () => {
    try {
      setState({ status: 'done', data: await read() });
    } catch (error) {
      setState({ status: 'error', message: apiErrorMessage(error, SOMETHING_WENT_WRONG) });
    }
  }, [read]);
  useEffect(() => {
    void load();
  }, [load]);
  return [state, load];
}
