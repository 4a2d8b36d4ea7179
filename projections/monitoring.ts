import { defineProjection } from '../src/platform/projections/projection.js';
import { publicConfiguration, verificationUrl } from '../src/monitoring/domain/endpoint.js';
import {
  DESTINATION_VERIFIED,
  type DestinationVerifiedData,
  ENDPOINT_DELETED,
  type EndpointDeletedData,
  ENDPOINT_DISABLED,
  ENDPOINT_ENABLED,
  ENDPOINT_MAINTENANCE_UNTIL_SET,
  ENDPOINT_RECONFIGURED,
  ENDPOINT_REGISTERED,
  type EndpointMaintenanceUntilSetData,
  type EndpointReconfiguredData,
  type EndpointRegisteredData,
  type EndpointToggledData,
  MAINTENANCE_WINDOW_CANCELLED,
  MAINTENANCE_WINDOW_SCHEDULED,
  type MaintenanceWindowCancelledData,
  type MaintenanceWindowScheduledData,
  PROJECT_CREATED,
  PROJECT_DELETED,
  PROJECT_UPDATED,
  type ProjectCreatedData,
  type ProjectDeletedData,
  type ProjectUpdatedData,
} from '../src/monitoring/domain/events.js';
import type { ViewTransaction } from '../src/platform/projections/projection.js';

/**
 * Projects, endpoints and maintenance windows, without hidden values: an endpoint row holds the
 * public configuration fields only (url without query/user-info, header names, *_configured flags).
 * A deleted project or endpoint leaves its collection (its events stay in the log).
 *
 * projects:            id (string), project_id, team_id, name, description, created_at, updated_at
 * endpoints:           id (string), endpoint_id, team_id, project_id, name, description, the public
 *                      configuration fields, enabled, destination_verified, destination_verified_at,
 *                      verification_url, verification_token, configuration_version, maintenance_until,
 *                      created_at, updated_at
 * maintenance_windows: id (string), window_id, team_id, project_id, endpoint_id, starts_at, ends_at,
 *                      reason, created_at, cancelled_at
 */
async function patchEndpoint(views: ViewTransaction, endpointId: number, patch: Record<string, unknown>): Promise<void> {
  const row = await views.get('endpoints', String(endpointId));
  if (row) views.put('endpoints', { ...row, ...patch });
}

export const monitoringProjection = defineProjection({
  name: 'monitoring',
  version: 1,
  collections: [
    { name: 'projects', indexes: [{ fields: ['team_id', 'project_id'] }] },
    {
      name: 'endpoints',
      indexes: [
        { fields: ['team_id', 'endpoint_id'] },
        { fields: ['team_id', 'project_id', 'endpoint_id'] },
        { fields: ['team_id', 'enabled', 'endpoint_id'] },
        { fields: ['enabled'] },
      ],
    },
    { name: 'maintenance_windows', indexes: [{ fields: ['team_id', 'ends_at'] }] },
  ],
  handlers: {
    [PROJECT_CREATED]: (event, views) => {
      const d = event.data as ProjectCreatedData;
      views.put('projects', { id: String(d.project_id), ...d, updated_at: d.created_at });
    },
    [PROJECT_UPDATED]: async (event, views) => {
      const d = event.data as ProjectUpdatedData;
      const row = await views.get('projects', String(d.project_id));
      if (row) views.put('projects', { ...row, ...d.changes, updated_at: d.updated_at });
    },
    [PROJECT_DELETED]: (event, views) => {
      views.delete('projects', String((event.data as ProjectDeletedData).project_id));
    },
    [ENDPOINT_REGISTERED]: (event, views) => {
      const d = event.data as EndpointRegisteredData;
      views.put('endpoints', {
        id: String(d.endpoint_id),
        endpoint_id: d.endpoint_id,
        team_id: d.team_id,
        project_id: d.project_id,
        name: d.name,
        description: d.description,
        ...publicConfiguration(d.configuration),
        enabled: false,
        destination_verified: false,
        destination_verified_at: null,
        verification_url: verificationUrl(d.configuration.url, d.endpoint_id),
        verification_token: d.verification_token,
        configuration_version: d.configuration_version,
        maintenance_until: null,
        created_at: d.created_at,
        updated_at: d.created_at,
      });
    },
    [ENDPOINT_RECONFIGURED]: async (event, views) => {
      const d = event.data as EndpointReconfiguredData;
      const { name, description, project_id, ...configuration } = d.changes;
      const patch: Record<string, unknown> = { ...publicConfiguration(configuration), configuration_version: d.configuration_version, updated_at: d.updated_at };
      if (name !== undefined) patch.name = name;
      if (description !== undefined) patch.description = description;
      if (project_id !== undefined) patch.project_id = project_id;
      if (configuration.url !== undefined) patch.verification_url = verificationUrl(configuration.url, d.endpoint_id);
      await patchEndpoint(views, d.endpoint_id, patch);
    },
    [ENDPOINT_ENABLED]: async (event, views) => {
      const d = event.data as EndpointToggledData;
      await patchEndpoint(views, d.endpoint_id, { enabled: true, updated_at: d.at });
    },
    [ENDPOINT_DISABLED]: async (event, views) => {
      const d = event.data as EndpointToggledData;
      await patchEndpoint(views, d.endpoint_id, { enabled: false, updated_at: d.at });
    },
    [DESTINATION_VERIFIED]: async (event, views) => {
      const d = event.data as DestinationVerifiedData;
      await patchEndpoint(views, d.endpoint_id, { destination_verified: true, destination_verified_at: d.verified_at, updated_at: d.verified_at });
    },
    [ENDPOINT_MAINTENANCE_UNTIL_SET]: async (event, views) => {
      const d = event.data as EndpointMaintenanceUntilSetData;
      await patchEndpoint(views, d.endpoint_id, { maintenance_until: d.maintenance_until, updated_at: d.at });
    },
    [ENDPOINT_DELETED]: (event, views) => {
      views.delete('endpoints', String((event.data as EndpointDeletedData).endpoint_id));
    },
    [MAINTENANCE_WINDOW_SCHEDULED]: (event, views) => {
      const d = event.data as MaintenanceWindowScheduledData;
      views.put('maintenance_windows', { id: String(d.window_id), ...d, cancelled_at: null });
    },
    [MAINTENANCE_WINDOW_CANCELLED]: async (event, views) => {
      const d = event.data as MaintenanceWindowCancelledData;
      const row = await views.get('maintenance_windows', String(d.window_id));
      if (row) views.put('maintenance_windows', { ...row, cancelled_at: d.cancelled_at });
    },
  },
});
