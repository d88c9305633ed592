// One console API call's state, as every view that posts a form shows it: the answer or the
// error, one replacing the other.

import { useState } from 'preact/hooks';
import { call, errorOf } from './api.js';

export interface Answer<T> {
  readonly answer: T | undefined;
  readonly error: string | undefined;
  /** POSTs `body` to `path`: a 200's body becomes the answer, anything else the error. */
  readonly post: (path: string, body: unknown) => Promise<void>;
  /** Shows `message` as the error without asking the server (a field the page itself refuses). */
  readonly fail: (message: string) => void;
}

export function useAnswer<T>(): Answer<T> {
  const [answer, setAnswer] = useState<T | undefined>();
  const [error, setError] = useState<string | undefined>();
  const post = async (path: string, body: unknown): Promise<void> => {
    const reply = await call<T>('POST', path, body);
    if (reply.status !== 200) {
      setAnswer(undefined);
      setError(errorOf(reply).message);
      return;
    }
    setError(undefined);
    setAnswer(reply.body);
  };
  return { answer, error, post, fail: setError };
}
