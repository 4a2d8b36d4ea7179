import type { PathResource } from '../../platform/http/path-resources.js';
import { teamExists } from '../views/tenancy/queries.js';

/** `:teamID` in application API paths: a team in the tenancy view. */
export const TEAM_PATH: PathResource = {
  param: 'teamID',
  what: 'The team',
  isTeam: true,
  exists: (reader, id) => teamExists(reader, id),
};
