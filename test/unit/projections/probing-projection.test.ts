import { probingProjection } from '../../../src/probing/views/probing/projection.js';
import { SCHEDULE } from '../../../src/probing/views/probing/view.js';
import { DEFAULT_CONFIGURATION } from '../../../src/monitoring/domain/endpoint.js';
import { given } from '../../support/projection-spec.js';

const T = '2026-11-23T10:00:00.000Z';
const registered = {
  type: 'EndpointRegistered',
  data: {
    endpoint_id: 5,
    team_id: 1,
    project_id: 2,
    name: 'API',
    description: '',
    configuration: { ...DEFAULT_CONFIGURATION, url: 'https://user:pw@example.com/health?key=secret', headers: { authorization: 'Bearer hidden' }, interval_seconds: 30 },
    verification_token: 'challenge-token',
    configuration_version: 1,
    created_at: T,
  },
};
const toggled = (type: string) => ({ type, data: { endpoint_id: 5, team_id: 1, at: T } });

describe('probing projection (the schedule)', () => {
  it('schedules an endpoint only once it is both verified and enabled, at its interval', async () => {
    const registeredOnly = await given(probingProjection, [registered]);
    expect(registeredOnly.document(SCHEDULE, '5')).toMatchObject({ endpoint_id: 5, schedulable: false, interval_seconds: 30, configuration_version: 1 });

    const enabledUnverified = await given(probingProjection, [registered, toggled('EndpointEnabled')]);
    expect(enabledUnverified.document(SCHEDULE, '5')).toMatchObject({ schedulable: false });

    const live = await given(probingProjection, [registered, { type: 'DestinationVerified', data: { endpoint_id: 5, team_id: 1, verified_at: T } }, toggled('EndpointEnabled')]);
    expect(live.document(SCHEDULE, '5')).toMatchObject({ schedulable: true });

    const disabled = await given(probingProjection, [registered, { type: 'DestinationVerified', data: { endpoint_id: 5, team_id: 1, verified_at: T } }, toggled('EndpointEnabled'), toggled('EndpointDisabled')]);
    expect(disabled.document(SCHEDULE, '5')).toMatchObject({ schedulable: false });
  });

  it('follows a new interval and version, and keeps no hidden value', async () => {
    const views = await given(probingProjection, [
      registered,
      { type: 'EndpointReconfigured', data: { endpoint_id: 5, team_id: 1, project_id: 2, changes: { interval_seconds: 120 }, configuration_version: 2, updated_at: T } },
    ]);
    expect(views.document(SCHEDULE, '5')).toMatchObject({ interval_seconds: 120, configuration_version: 2 });
    const stored = JSON.stringify(views.documents(SCHEDULE));
    for (const secret of ['user:pw', 'key=secret', 'Bearer hidden', 'challenge-token']) expect(stored).not.toContain(secret);
  });

  it('drops a deleted endpoint from the schedule, and a later event of its stream does not bring it back', async () => {
    const verified = { type: 'DestinationVerified', data: { endpoint_id: 5, team_id: 1, verified_at: T } };
    const deleted = { type: 'EndpointDeleted', data: { endpoint_id: 5, team_id: 1, project_id: 2, deleted_at: T } };
    const views = await given(probingProjection, [registered, verified, toggled('EndpointEnabled'), deleted]);
    expect(views.document(SCHEDULE, '5')).toBeUndefined();
    const late = await given(probingProjection, [registered, verified, toggled('EndpointEnabled'), deleted, toggled('EndpointDisabled')]);
    expect(late.documents(SCHEDULE)).toEqual([]);
  });
});
