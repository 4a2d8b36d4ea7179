import { defineProjection } from '../../../platform/projections/projection.js';
import { publicConfiguration, verificationUrl } from '../../domain/endpoint.js';
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
} from '../../domain/events.js';
import {
  ENDPOINTS,
  type EndpointDoc,
  MAINTENANCE_WINDOWS,
  type MaintenanceWindowDoc,
  MONITORING_VIEW,
  type ProjectDoc,
  PROJECTS,
} from './view.js';
import type { ViewTransaction } from '../../../platform/projections/projection.js';
import type { Doc } from '../../../platform/read-store/read-store.port.js';

/**
 * Projects, endpoints and maintenance windows, without hidden values: an endpoint row holds the
 * public configuration fields only (url without query/user-info, header names, *_configured flags).
 * A deleted project or endpoint leaves its collection (its events stay in the log).
 * Names and document types: view.ts.
 */
const asDoc = (doc: ProjectDoc | EndpointDoc | MaintenanceWindowDoc): Doc => doc as unknown as Doc;

async function patchEndpoint(views: ViewTransaction, endpointId: number, patch: Record<string, unknown>): Promise<void> {
  const row = await views.get(ENDPOINTS, String(endpointId));
  if (row) views.put(ENDPOINTS, { ...row, ...patch });
}

export const monitoringProjection = defineProjection({
  name: MONITORING_VIEW,
  version: 1,
  collections: [
    { name: PROJECTS, indexes: [{ fields: ['team_id', 'project_id'] }] },
    {
      name: ENDPOINTS,
      indexes: [
        { fields: ['team_id', 'endpoint_id'] },
        { fields: ['team_id', 'project_id', 'endpoint_id'] },
        { fields: ['team_id', 'enabled', 'endpoint_id'] },
        { fields: ['enabled'] },
      ],
    },
    { name: MAINTENANCE_WINDOWS, indexes: [{ fields: ['team_id', 'ends_at'] }] },
  ],
  handlers: {
    [PROJECT_CREATED]: (event, views) => {
      const d = event.data as ProjectCreatedData;
      views.put(PROJECTS, asDoc({ id: String(d.project_id), ...d, updated_at: d.created_at }));
    },
    [PROJECT_UPDATED]: async (event, views) => {
      const d = event.data as ProjectUpdatedData;
      const row = await views.get(PROJECTS, String(d.project_id));
      if (row) views.put(PROJECTS, { ...row, ...d.changes, updated_at: d.updated_at });
    },
    [PROJECT_DELETED]: (event, views) => {
      views.delete(PROJECTS, String((event.data as ProjectDeletedData).project_id));
    },
    [ENDPOINT_REGISTERED]: (event, views) => {
      const d = event.data as EndpointRegisteredData;
      views.put(ENDPOINTS, asDoc({
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
      } as EndpointDoc));
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
      views.delete(ENDPOINTS, String((event.data as EndpointDeletedData).endpoint_id));
    },
    [MAINTENANCE_WINDOW_SCHEDULED]: (event, views) => {
      const d = event.data as MaintenanceWindowScheduledData;
      views.put(MAINTENANCE_WINDOWS, asDoc({ id: String(d.window_id), ...d, cancelled_at: null }));
    },
    [MAINTENANCE_WINDOW_CANCELLED]: async (event, views) => {
      const d = event.data as MaintenanceWindowCancelledData;
      const row = await views.get(MAINTENANCE_WINDOWS, String(d.window_id));
      if (row) views.put(MAINTENANCE_WINDOWS, { ...row, cancelled_at: d.cancelled_at });
    },
  },
});
