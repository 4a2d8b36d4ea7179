import {
  MongoClientClosedError,
  MongoNetworkError,
  MongoNotConnectedError,
  MongoServerSelectionError,
  MongoTopologyClosedError,
} from 'mongodb';
import { StoreUnavailableError } from '../../event-store/event-store.port.js';

/** Errors meaning "the server cannot be reached", as opposed to a rejected operation. */
export function isConnectionError(error: unknown): boolean {
  return (
    error instanceof MongoNetworkError ||
    error instanceof MongoServerSelectionError ||
    error instanceof MongoTopologyClosedError ||
    error instanceof MongoNotConnectedError ||
    error instanceof MongoClientClosedError
  );
}

/** Runs a MongoDB operation, turning connection failures into StoreUnavailableError (HTTP 503). */
export async function guardMongo<T>(what: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (isConnectionError(error)) {
      throw new StoreUnavailableError(`MongoDB unavailable (${what}): ${(error as Error).message}`, { cause: error });
    }
    throw error;
  }
}

export function isDuplicateKeyError(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === 11000;
}
