// "Try as": a request answered exactly as the chosen caller would be answered (the rows of a read,
// the answer of a write), a write always rolled back.

import { useState } from 'preact/hooks';
import type { Caller, TryAnswer, TryBody } from './api.js';
import { Choice } from './choice.js';
import { ErrorAlert } from './error-alert.js';
import { useAnswer } from './use-answer.js';
import { CallerPicker } from './caller-picker.js';

const METHODS = ['GET', 'POST', 'PATCH', 'DELETE'] as const satisfies readonly TryBody['method'][];

export function TryView(props: { readonly tables: readonly string[] }) {
  const [caller, setCaller] = useState<Caller | string>({ kind: 'anonymous' });
  const [method, setMethod] = useState<(typeof METHODS)[number]>('GET');
  const [table, setTable] = useState(props.tables[0] ?? '');
  const [query, setQuery] = useState('');
  const [body, setBody] = useState('{}');
  const { answer, error, post, fail } = useAnswer<TryAnswer>();
  const run = async (): Promise<void> => {
    if (typeof caller === 'string') {
      fail(caller);
      return;
    }
    let json: unknown;
    if (method === 'POST' || method === 'PATCH') {
      try {
        json = JSON.parse(body);
      } catch {
        fail('the body must be JSON');
        return;
      }
    }
    const request: TryBody = { caller, method, table, query, ...(json === undefined ? {} : { body: json }) };
    await post('/_/api/try', request);
  };
  return (
    <section aria-labelledby="try-title">
      <h2 id="try-title">Try as</h2>
      <p class="note">The request is answered as the caller would be answered; a write is rolled back.</p>
      <form
        class="toolbar"
        onSubmit={(e) => {
          e.preventDefault();
          void run();
        }}
      >
        <CallerPicker id="try-caller" onChange={setCaller} />
        <Choice id="try-method" label="Method" value={method} options={METHODS} onChange={setMethod} />
        <Choice id="try-table" label="Table" value={table} options={props.tables} onChange={setTable} />
        <label for="try-query">Query (PostgREST style, e.g. id=eq.1&amp;select=id,title)</label>
        <input
          id="try-query"
          spellcheck={false}
          value={query}
          onInput={(e) => setQuery(e.currentTarget.value)}
        />
        {method === 'POST' || method === 'PATCH' ? (
          <>
            <label for="try-body">Body (JSON)</label>
            <textarea
              id="try-body"
              rows={3}
              spellcheck={false}
              value={body}
              onInput={(e) => setBody(e.currentTarget.value)}
            />
          </>
        ) : null}
        <button type="submit">Send as this caller</button>
      </form>
      <ErrorAlert error={error} />
      {answer === undefined ? null : (
        <div data-testid="try-answer">
          <p>
            Status <strong data-testid="try-status">{answer.status}</strong>
            {answer.rolled_back ? ' — rolled back: nothing was stored' : ''}
          </p>
          <pre>{JSON.stringify(answer.body, null, 2)}</pre>
        </div>
      )}
    </section>
  );
}
