/**
 * What the prober hands a probe outcome to: the endpoint as of its latest event (monitoring),
 * and the checks context's recorder, composed here with alerting's judge, monitoring's
 * maintenance coverage and alerting's dependencies (parent-signals.ts). Probing probes; it decides nothing about the check it recorded.
 */
import { AlertingCheckJudge } from '../../alerting/application/check-judge.js';
import { ParentSignals } from '../../alerting/application/parent-signals.js';
import type { EndpointAlertsState } from '../../alerting/domain/endpoint-alerts.js';
import { CheckRecorder, type RecordCheckInput, type RecordCheckResult } from '../../checks/application/check-recorder.js';
import { MaintenanceCoverage } from '../../monitoring/application/maintenance-coverage.js';
import { evolveEndpoint, type EndpointSnapshot, type EndpointSnapshotState } from '../../monitoring/domain/endpoint-snapshot.js';
import { endpointStream } from '../../monitoring/domain/events.js';
import { StreamCache } from '../../platform/es/stream-cache.js';
import type { Platform } from '../../platform/platform.js';

export class ProbeRecorder {
  /** Endpoints folded per process (also the fold of the destination-verification command). */
  readonly endpoints: StreamCache<EndpointSnapshotState>;
  private readonly checks: CheckRecorder<EndpointSnapshot, EndpointAlertsState>;

  constructor(platform: Pick<Platform, 'events' | 'ids' | 'metrics'>) {
    this.endpoints = new StreamCache<EndpointSnapshotState>(platform.events, () => null, evolveEndpoint);
    const judge = new AlertingCheckJudge(platform.events);
    const maintenance = new MaintenanceCoverage(platform.events);
    const parents = new ParentSignals(platform.events, { endpoints: this.endpoints, alerts: judge.folds.alerts });
    // Maintenance first (it suppresses successes too); a failure while a parent is down names it.
    this.checks = new CheckRecorder(platform, judge, async (endpoint, outcome) => {
      if (await maintenance.covers(endpoint, outcome.checked_at)) return {};
      const suppressedBy = await parents.suppressing(endpoint, outcome.success);
      return suppressedBy.length > 0 ? { suppressed_by: suppressedBy } : null;
    });
  }

  /** The endpoint as of its latest event (null when it does not exist). */
  async loadEndpoint(endpointId: number): Promise<EndpointSnapshot | null> {
    return (await this.endpoints.load(endpointStream(endpointId))).state;
  }

  record(input: RecordCheckInput<EndpointSnapshot>): Promise<RecordCheckResult> {
    return this.checks.record(input);
  }
}
