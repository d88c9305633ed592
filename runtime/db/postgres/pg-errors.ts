// PostgreSQL's errors as pg reports them: server errors (DatabaseError) by SQLSTATE, network errors
// by Node's code; what is left ("Connection terminated unexpectedly", connect timeouts) is a lost
// connection.

import pg from 'pg';
import type { RestError } from '../../../errors/rest-error.js';
import {
  CONNECTION_FAILED,
  adapterError,
  mapDriverError,
  stringField,
  type DbErrorKind,
  type DriverErrors,
} from '../map-db-error.js';

// https://www.postgresql.org/docs/current/errcodes-appendix.html
function kindOf(sqlState: string): DbErrorKind {
  switch (sqlState) {
    case '23505':
      return 'unique';
    case '23502':
      return 'not_null';
    case '23503':
      return 'foreign_key';
    case '23514':
      return 'check';
    case '42501':
      return 'forbidden';
    case '57014': // query_canceled: statement_timeout ran out
      return 'timeout';
    // A statement written for the schema as it was: a column or table renamed or dropped since.
    case '42703': // undefined_column
    case '42P01': // undefined_table
      return 'schema_changed';
    case '40001': // serialization_failure
    case '40P01': // deadlock_detected
    case '55P03': // lock_not_available (lock_timeout)
      return 'transaction_conflict';
    // program_limit_exceeded: a value over a limit of the server, e.g. a key longer than a btree
    // index takes ("index row size … exceeds maximum").
    case '54000':
      return 'too_large';
    // 08P01 (protocol violation) is a bug of ours, e.g. a wrong parameter count: not an outage.
    case '08P01':
      return 'internal';
    case '57P01': // admin_shutdown
    case '57P02': // crash_shutdown
    case '57P03': // cannot_connect_now (starting up)
    case '53300': // too_many_connections
    case '28000': // invalid_authorization_specification
    case '28P01': // invalid_password
    case '3D000': // invalid_catalog_name: the database does not exist
      return 'unavailable';
  }
  if (sqlState.startsWith('22')) return 'invalid_value';
  if (sqlState.startsWith('08')) return 'unavailable';
  return 'internal';
}

const CONNECT_REASONS: Readonly<Record<string, string>> = {
  '28000': 'authentication failed',
  '28P01': 'authentication failed',
  '3D000': 'the database does not exist',
  '57P03': 'the server is starting up',
  '53300': 'the server has too many connections',
  // TLS (https://nodejs.org/api/tls.html#x509-certificate-error-codes), with the URL parameters that help.
  DEPTH_ZERO_SELF_SIGNED_CERT:
    "the server's certificate is self-signed and not trusted (name it with sslrootcert=<file>, or use sslmode=require to encrypt without verifying)",
  SELF_SIGNED_CERT_IN_CHAIN:
    "the server's certificate comes from an untrusted CA (name the CA with sslrootcert=<file>, or use sslmode=require to encrypt without verifying)",
  UNABLE_TO_VERIFY_LEAF_SIGNATURE:
    "the server's certificate cannot be verified (name its CA with sslrootcert=<file>, or use sslmode=require to encrypt without verifying)",
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
    "the server's certificate cannot be verified (name its CA with sslrootcert=<file>, or use sslmode=require to encrypt without verifying)",
  ERR_TLS_CERT_ALTNAME_INVALID:
    "the server's certificate is not for this host name (sslmode=verify-ca checks the CA only)",
  CERT_HAS_EXPIRED: "the server's certificate has expired",
};

export const pgErrors: DriverErrors = {
  kind: (f) => {
    const code = stringField(f, 'code');
    return code !== undefined && /^[0-9A-Z]{5}$/.test(code) ? kindOf(code) : 'internal';
  },
  // The structured error names the column.
  notNullColumn: (f) => stringField(f, 'column'),
  connectReason: (f) => {
    const code = stringField(f, 'code');
    return code === undefined ? undefined : CONNECT_REASONS[code];
  },
};

/** True for an error of the connection itself (no SQLSTATE): such a client is never reused. */
export const isConnectionFailure = (e: unknown): boolean =>
  !(e instanceof pg.DatabaseError) && typeof (e as { code?: unknown } | null)?.code !== 'string';

/** Maps what pg threw for a statement of the adapter; an error without a code is a lost connection. */
export const mapPgError = (e: unknown): RestError =>
  mapDriverError(pgErrors, isConnectionFailure(e) ? adapterError(CONNECTION_FAILED, e) : e);
