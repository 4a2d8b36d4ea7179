import { type DynamicModule, Module, type Type } from '@nestjs/common';
import type { Projection } from '../platform/projections/projection.js';
import { AlertingModule } from '../alerting/alerting.module.js';
import { AnalyticsModule } from '../analytics/analytics.module.js';
import { AuditModule } from '../audit/audit.module.js';
import { ChecksModule } from '../checks/checks.module.js';
import { EndpointAlertsFold } from '../alerting/application/endpoint-alerts-fold.js';
import { IncidentsModule } from '../incidents/incidents.module.js';
import { MonitoringModule } from '../monitoring/monitoring.module.js';
import { NotificationsModule } from '../notifications/notifications.module.js';
import { ProbingModule } from '../probing/probing.module.js';
import { SlosModule } from '../slos/slos.module.js';
import { StatusPagesModule } from '../statuspages/statuspages.module.js';
import { TenancyModule } from '../tenancy/tenancy.module.js';
import { PROCESSORS, RETIRED_PROCESSORS } from '../../projections/index.js';
import { UpcasterRegistry } from '../platform/event-store/upcasting.js';
import type { DomainErrorMapping } from '../platform/http/domain-errors.js';
import { incidentsProblems } from '../incidents/http/incidents-errors.js';
import { monitoringProblems } from '../monitoring/http/monitoring-errors.js';
import { notificationsProblems } from '../notifications/http/notifications-errors.js';
import { statusPagesProblems } from '../statuspages/http/status-pages-errors.js';
import { tenancyProblems } from '../tenancy/http/tenancy-errors.js';
import { slosProblems } from '../slos/http/slos-errors.js';
import { registerCheckUpcasters } from '../checks/domain/check.js';
import { registerSummaryUpcasters } from '../checks/domain/check-summary.js';
import { CHECK_LIST_SOURCE } from '../monitoring/application/check-list-source.js';
import { RollupCheckList } from '../analytics/views/rollups/queries.js';
import { PLATFORM, type Platform } from '../platform/platform.js';

/**
 * The bounded contexts. Every role loads them all (HTTP routes are only served by roles all and
 * api; background workers check `platform.config.role` before they start).
 */
export function contextModules(): Array<Type | DynamicModule> {
  return [checkListModule(), TenancyModule, MonitoringModule, checksModule(), IncidentsModule, AlertingModule, AnalyticsModule, ProbingModule, NotificationsModule, StatusPagesModule, AuditModule, SlosModule];
}

/**
 * Monitoring's checks list and `GET` of one check read analytics' raw rows (one row per retained
 * check) through monitoring's `CheckListSource` port, so monitoring imports nothing of analytics.
 */
@Module({})
class CheckListBinding {}

function checkListModule(): DynamicModule {
  return {
    module: CheckListBinding,
    global: true,
    providers: [{ provide: CHECK_LIST_SOURCE, inject: [PLATFORM], useFactory: (platform: Platform) => new RollupCheckList(platform.reader) }],
    exports: [CHECK_LIST_SOURCE],
  };
}

/** Checks, told that alerting's old signal events in a check stream go with the checks once carried over. */
function checksModule(): DynamicModule {
  return ChecksModule.forRoot((platform) => {
    const alerts = new EndpointAlertsFold(platform.events);
    return (endpointId) => alerts.retiredCheckStreamTypes(endpointId);
  });
}

/**
 * Every processor the runner keeps up to date: the catalogue in `projections/index.ts`, which
 * only this composition root imports (each view's names and document types are its slice's
 * `view.ts`, under `src/<context>/views/<view>/`).
 */
export function projections(): Projection[] {
  return PROCESSORS;
}

/** Projections that left the catalogue, whose views an earlier version left behind (`projections/index.ts`). */
export function retiredProjections(): readonly string[] {
  return RETIRED_PROCESSORS;
}

/** Every context's upcasters: old schema versions of stored events are lifted on read. */
export function upcasters(): UpcasterRegistry {
  const registry = new UpcasterRegistry();
  registerCheckUpcasters(registry);
  registerSummaryUpcasters(registry);
  return registry;
}

/** How every context's domain errors read at the HTTP edge (one mapping per context). */
export function domainErrorMappings(): DomainErrorMapping[] {
  return [tenancyProblems, monitoringProblems, incidentsProblems, notificationsProblems, statusPagesProblems, slosProblems];
}
