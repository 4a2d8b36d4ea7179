import {
  MongoClientClosedError,
  MongoError,
  MongoErrorLabel,
  MongoNetworkError,
  MongoNotConnectedError,
  MongoOperationTimeoutError,
  MongoServerClosedError,
  MongoServerSelectionError,
  MongoStalePrimaryError,
  MongoTopologyClosedError,
  MongoWriteConcernError,
} from 'mongodb';
import { StoreUnavailableError } from '../../event-store/event-store.port.js';

/**
 * Server error codes of a replica set changing hands (the driver's SDAM "not writable primary"
 * and "node is recovering" families, and interruptions by shutdown or a step-down).
 */
const FAILOVER_CODES = new Set([
  91, // ShutdownInProgress
  189, // PrimarySteppedDown
  10107, // NotWritablePrimary
  10058, // LegacyNotPrimary
  11600, // InterruptedAtShutdown
  11602, // InterruptedDueToReplStateChange
  13435, // NotPrimaryNoSecondaryOk
  13436, // NotPrimaryOrSecondary
  6, // HostUnreachable
  7, // HostNotFound
  89, // NetworkTimeout
  9001, // SocketException
  262, // ExceededTimeLimit
  64, // WriteConcernTimeout (WriteConcernFailed before 8.1)
  134, // ReadConcernMajorityNotAvailableYet
  133, // FailedToSatisfyReadPreference
]);

/** Labels the server or driver puts on errors that a retry a moment later may get past. */
const TRANSIENT_LABELS = [
  MongoErrorLabel.RetryableWriteError,
  MongoErrorLabel.TransientTransactionError,
  MongoErrorLabel.UnknownTransactionCommitResult,
  MongoErrorLabel.RetryableError,
  MongoErrorLabel.SystemOverloadedError,
];

/** Errors meaning "the server cannot be reached", as opposed to a rejected operation. */
export function isConnectionError(error: unknown): boolean {
  return (
    error instanceof MongoNetworkError ||
    error instanceof MongoServerSelectionError ||
    error instanceof MongoTopologyClosedError ||
    error instanceof MongoNotConnectedError ||
    error instanceof MongoClientClosedError ||
    error instanceof MongoServerClosedError
  );
}

/**
 * Errors of a replica set in failover or under strain: no writable primary, a node recovering or
 * shutting down, a write concern not met, a transaction whose retries gave up on a transient
 * error. The operation did not fail for what it asked; the same request shortly after may succeed.
 */
export function isFailoverError(error: unknown): boolean {
  if (!(error instanceof MongoError)) return false;
  if (error instanceof MongoWriteConcernError || error instanceof MongoStalePrimaryError || error instanceof MongoOperationTimeoutError) return true;
  if (TRANSIENT_LABELS.some((label) => error.hasErrorLabel(label))) return true;
  const code = typeof error.code === 'number' ? error.code : Number(error.code);
  return FAILOVER_CODES.has(code);
}

/**
 * Runs a MongoDB operation, turning connection failures and failover errors into
 * StoreUnavailableError (HTTP 503 with Retry-After).
 */
export async function guardMongo<T>(what: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (isConnectionError(error) || isFailoverError(error)) {
      throw new StoreUnavailableError(`MongoDB unavailable (${what}): ${(error as Error).message}`, { cause: error });
    }
    throw error;
  }
}

export function isDuplicateKeyError(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === 11000;
}
