import {
  MongoError,
  MongoErrorLabel,
  MongoNetworkError,
  MongoServerError,
  MongoServerSelectionError,
  MongoWriteConcernError,
} from 'mongodb';
import { StoreUnavailableError } from '../../../src/platform/event-store/event-store.port.js';
import { guardMongo } from '../../../src/platform/read-store/mongodb/mongo-errors.js';

/** What guardMongo makes of an error the driver raised. */
async function guarded(error: Error): Promise<unknown> {
  return guardMongo('test', () => Promise.reject(error)).catch((caught: unknown) => caught);
}

function serverError(fields: Record<string, unknown>): MongoServerError {
  return new MongoServerError({ ok: 0, ...fields } as never);
}

describe('MongoDB failover errors are "store unavailable" (503 with Retry-After)', () => {
  const failover: Array<[string, Error]> = [
    ['NotWritablePrimary after a step-down', serverError({ code: 10107, codeName: 'NotWritablePrimary', errmsg: 'not primary' })],
    ['PrimarySteppedDown', serverError({ code: 189, codeName: 'PrimarySteppedDown', errmsg: 'primary stepped down' })],
    ['a node recovering', serverError({ code: 13436, codeName: 'NotPrimaryOrSecondary', errmsg: 'node is recovering' })],
    ['InterruptedDueToReplStateChange', serverError({ code: 11602, codeName: 'InterruptedDueToReplStateChange', errmsg: 'operation was interrupted' })],
    ['a shutting-down node', serverError({ code: 91, codeName: 'ShutdownInProgress', errmsg: 'shutdown in progress' })],
    [
      'a write concern not met',
      new MongoWriteConcernError({ writeConcernError: { code: 64, codeName: 'WriteConcernTimeout', errmsg: 'waiting for replication timed out' } } as never),
    ],
    [
      'a transaction whose retries gave up on a transient error',
      serverError({ code: 251, codeName: 'NoSuchTransaction', errmsg: 'transaction aborted', errorLabels: [MongoErrorLabel.TransientTransactionError] }),
    ],
    [
      'a commit whose result is unknown',
      serverError({ code: 50, codeName: 'MaxTimeMSExpired', errmsg: 'operation exceeded time limit', errorLabels: [MongoErrorLabel.UnknownTransactionCommitResult] }),
    ],
    ['a retryable write error', serverError({ code: 1, errmsg: 'x', errorLabels: [MongoErrorLabel.RetryableWriteError] })],
    ['a lost connection', new MongoNetworkError('connection reset')],
    ['no server selectable', new MongoServerSelectionError('Server selection timed out after 10000 ms', { type: 'ReplicaSetNoPrimary' } as never)],
  ];

  it.each(failover)('%s', async (_what, error) => {
    const result = await guarded(error);
    expect(result).toBeInstanceOf(StoreUnavailableError);
    expect((result as StoreUnavailableError).cause).toBe(error);
  });

  it('leaves errors about the operation itself alone (duplicate key, bad query)', async () => {
    const duplicate = serverError({ code: 11000, codeName: 'DuplicateKey', errmsg: 'E11000 duplicate key error' });
    const badQuery = serverError({ code: 2, codeName: 'BadValue', errmsg: 'unknown operator: $foo' });
    expect(await guarded(duplicate)).toBe(duplicate);
    expect(await guarded(badQuery)).toBe(badQuery);
    const plain = new MongoError('something else');
    expect(await guarded(plain)).toBe(plain);
  });
});
