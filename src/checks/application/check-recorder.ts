/**
 * RecordCheck: turns one probe outcome into a `CheckRecorded` on `checks-<endpointId>`, the
 * check context's stream, and hands the recorded check to the judge that follows it.
 *
 * The checks context knows nothing of alerting or maintenance: the composition gives it a
 * `CheckJudge` (alerting: the latency threshold in force when the check is judged, and the alert
 * signals it causes on alerting's own stream) and a `CheckSuppression` (whether a maintenance
 * window covers the check, or an endpoint it depends on is down).
 *
 * - The check stream is folded per process by the judge's fold and read forward from the
 *   cached revision, so a check costs a few short reads, not a replay.
 * - The append goes through runStreamCommand (expected revision; on a conflict it reloads and
 *   decides again); a redelivered job id records nothing. It may share a commit with the other
 *   checks of its turn of the event loop (group commit): answers arrive by the hundred at once.
 * - Appends for one endpoint are serialised in this process; across processes the expected
 *   revision protects the stream.
 */
import { randomUUID } from 'node:crypto';
import { CHECK_RECORDED, checksStream, recordedCheck, type CheckLatencyJudgment, type CheckRecordedData, type CheckSource, type ProbeOutcome } from '../domain/check.js';
import { DEFAULT_REGION } from '../../platform/config/region.js';
import { systemContext, type CommandContext } from '../../platform/es/command-context.js';
import { runStreamCommand, type Aggregate, type StreamFold } from '../../platform/es/stream-command.js';
import type { AppendResult } from '../../platform/event-store/event-store.port.js';
import type { Platform } from '../../platform/platform.js';

const MAX_ATTEMPTS = 8;
/** The check append's context: the actor alone (built once, not per check). */
const PROBER_CONTEXT: CommandContext = Object.freeze(systemContext('prober'));
const CHECK_ID_BLOCK = 100;

/** What a check needs to know of its endpoint. */
export interface CheckedEndpoint {
  endpoint_id: number;
  team_id: number;
  project_id: number;
  configuration_version: number;
}

/** Where a check was taken: the prober's region, and whether for one of the endpoint's regions. */
export interface CheckPlace {
  region: string;
  regional: boolean;
}

/** An event the recording caused (the check itself, or what the judge appended after it). */
export interface RecordedEffect {
  type: string;
  data: unknown;
}

/**
 * Judges each check while it is recorded and acts on it once it is (implemented by alerting).
 * `S` is the judge's fold of the check stream, which the append's expected revision comes from.
 */
export interface CheckJudge<E extends CheckedEndpoint, S> {
  readonly aggregate: Aggregate<S>;
  readonly fold: StreamFold<S>;
  /** Whether the folded stream already holds the check of this job (a redelivery). */
  hasJob(state: S, jobId: string): boolean;
  /** The check's latency, judged on the state before it. */
  judge(state: S, outcome: ProbeOutcome, taken: CheckPlace, endpoint: E): CheckLatencyJudgment;
  /** After the check was appended at `revision` (state: the fold before it); the events it caused, and their append. */
  afterRecorded(state: S, check: CheckRecordedData, revision: number, endpoint: E, context: CommandContext): Promise<{ events: RecordedEffect[]; append: AppendResult | null }>;
}

/**
 * Whether a check's alerts are suppressed, and why: null when they are not; otherwise
 * `suppressed_by` names the endpoints whose outage suppresses it (none for a maintenance window).
 * Composed from monitoring's maintenance coverage and alerting's dependencies.
 */
export type CheckSuppression<E extends CheckedEndpoint> = (endpoint: E, outcome: ProbeOutcome) => Promise<{ suppressed_by?: number[] } | null>;

export interface RecordCheckInput<E extends CheckedEndpoint> {
  jobId: string | null;
  source: CheckSource;
  endpoint: E;
  outcome: ProbeOutcome;
  /** Region of the prober that took the check; default `local`. */
  region?: string;
  /** Taken for one of the endpoint's regions (a job with a region). */
  regional?: boolean;
}

export interface RecordCheckResult {
  /** null when the job had already been recorded (redelivery). */
  check: CheckRecordedData | null;
  /** The check and the events it caused. */
  events: RecordedEffect[];
  /** Where the last append ended (null: nothing appended); with `events`, what read-your-writes waits for. */
  append: AppendResult | null;
}

export class CheckRecorder<E extends CheckedEndpoint, S> {
  private readonly queues = new Map<number, Promise<unknown>>();
  private idBlock: { next: number; end: number } | null = null;
  private idQueue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly platform: Pick<Platform, 'events' | 'ids' | 'metrics'>,
    private readonly judge: CheckJudge<E, S>,
    private readonly suppressed: CheckSuppression<E>,
  ) {}

  record(input: RecordCheckInput<E>): Promise<RecordCheckResult> {
    const endpointId = input.endpoint.endpoint_id;
    const previous = this.queues.get(endpointId);
    // Most checks find none of their endpoint's in flight and start at once: chaining each on a
    // resolved promise (catch, then, finally, catch) was four promises and their closures a check.
    const recordNow = () => this.recordNow(input);
    const run = previous ? previous.then(recordNow, recordNow) : recordNow();
    this.queues.set(endpointId, run);
    const done = () => {
      if (this.queues.get(endpointId) === run) this.queues.delete(endpointId);
    };
    run.then(done, done);
    return run;
  }

  private async recordNow(input: RecordCheckInput<E>): Promise<RecordCheckResult> {
    const { endpoint, outcome } = input;
    const suppression = await this.suppressed(endpoint, outcome);
    // What the check causes is correlated with its job; the check itself carries the job id in
    // its data, so its metadata names the actor alone (the SQLite log stores that text once).
    const context = systemContext('prober', input.jobId ?? randomUUID());
    const taken: CheckPlace = { region: input.region ?? DEFAULT_REGION, regional: input.regional === true };
    let checkId: number | null = null;
    const recorded = await runStreamCommand(
      this.platform.events,
      checksStream(endpoint.endpoint_id),
      this.judge.aggregate,
      PROBER_CONTEXT,
      async (state) => {
        if (input.jobId !== null && this.judge.hasJob(state, input.jobId)) return { events: [], result: null };
        checkId ??= await this.nextCheckId();
        const check = recordedCheck(
          outcome,
          {
            check_id: checkId,
            team_id: endpoint.team_id,
            project_id: endpoint.project_id,
            endpoint_id: endpoint.endpoint_id,
            configuration_version: endpoint.configuration_version,
            source: input.source,
            job_id: input.jobId,
            alert_suppressed: suppression !== null,
            suppressed_by: suppression?.suppressed_by,
            imported: false,
            region: taken.region,
            regional: taken.regional,
          },
          this.judge.judge(state, outcome, taken, endpoint),
        );
        return { events: [{ type: CHECK_RECORDED, data: check, metadata: { occurred_at: outcome.checked_at } }], result: null };
      },
      { fold: this.judge.fold, attempts: MAX_ATTEMPTS, foldOwnAppends: true, groupCommit: true },
    );
    if (!recorded.append) return { check: null, events: [], append: null };
    const check = recorded.appended[0].data as CheckRecordedData;
    this.platform.metrics.checkRecorded(check);
    const after = await this.judge.afterRecorded(recorded.state, check, recorded.append.nextExpectedRevision, endpoint, context);
    return { check, events: [{ type: CHECK_RECORDED, data: check }, ...after.events], append: after.append ?? recorded.append };
  }

  /** Check ids come from the shared `check` sequence in blocks: one append per block. */
  private nextCheckId(): Promise<number> {
    const run = this.idQueue.catch(() => undefined).then(async () => {
      if (!this.idBlock || this.idBlock.next >= this.idBlock.end) {
        const range = await this.platform.ids.reserve('check', CHECK_ID_BLOCK);
        this.idBlock = { next: range.first, end: range.first + range.count };
      }
      return this.idBlock.next++;
    });
    this.idQueue = run;
    return run;
  }
}
