import type { PathResource } from '../../platform/http/path-resources.js';

/** `:teamID` in application API paths: a team in the tenancy view. */
export const TEAM_PATH: PathResource = {
  param: 'teamID',
  what: 'The team',
  isTeam: true,
  exists: async (reader, id) => (await reader.get('tenancy', 'teams', id)) !== null,
};
