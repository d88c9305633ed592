// The one place HTTP answers errors: RestError → its status, headers and public body; anything
// else (and every internal error) → a bare 500 with the request id. Details (cause, stack, SQL)
// go to the log only.

import type { ErrorRequestHandler } from 'express';
import { httpStatusOf, isRestError } from '../../errors/rest-error.js';
import type { Logger } from '../logger.js';
import { requestIdFrom } from './common-headers.js';
import { isPgrstPath, pgrstErrorBody, pgrstInternalBody, pgrstStatus } from './pgrst-errors.js';
import { sendJson } from './send-json.js';

/** Seconds a client is asked to wait before it sends a request that met a 503 again. */
const RETRY_AFTER_SECONDS = '1';

export interface ErrorHooks {
  /** A statement met another schema than the one it was planned for (`schema_changed`). */
  readonly schemaChanged?: () => void;
}

export function errorMiddleware(logger: Logger, hooks: ErrorHooks = {}): ErrorRequestHandler {
  return (err: unknown, req, res, next) => {
    // Whoever answers, the next request is planned against the schema as it is now.
    if (isRestError(err) && err.code === 'schema_changed') hooks.schemaChanged?.();
    const requestId = requestIdFrom(res);
    const entry = { requestId, method: req.method, path: req.path };
    // Nobody is left to read an answer: a note for whoever traces requests, not a warning.
    if (isRestError(err) && err.code === 'client_gone') {
      logger.debug({ ...entry, code: err.code }, err.message);
      return;
    }
    if (res.headersSent) {
      logger.error({ ...entry, err }, 'error after the response started');
      next(err);
      return;
    }
    const pgrst = isPgrstPath(req.path);
    if (isRestError(err) && err.category !== 'internal') {
      const status = pgrst ? pgrstStatus(err) : httpStatusOf[err.category];
      if (status >= 500)
        logger.warn({ ...entry, status, code: err.code, err: err.cause ?? err }, err.message);
      else logger.debug({ ...entry, status, code: err.code }, err.message);
      for (const [name, value] of Object.entries(err.headers)) res.setHeader(name, value);
      // An unavailable database: clients that retry a 503 are told when.
      if (status === 503 && !res.hasHeader('Retry-After')) res.setHeader('Retry-After', RETRY_AFTER_SECONDS);
      sendJson(res, status, pgrst ? pgrstErrorBody(err) : err.toBody());
      return;
    }
    const cause = isRestError(err) ? (err.cause ?? err) : err;
    logger.error({ ...entry, status: 500, err: cause }, 'internal error');
    sendJson(
      res,
      500,
      pgrst
        ? pgrstInternalBody(requestId)
        : {
            error: {
              code: 'internal',
              message: `internal error (request id ${requestId})`,
              details: { request_id: requestId },
            },
          },
    );
  };
}
