import type { PathResource } from '../../platform/http/path-resources.js';
import { STATUS_PAGES_COLLECTION, STATUS_PAGES_PROJECTION } from '../views/status-pages/view.js';

/** `:pageID` in application API paths: a status page of the path's team. */
export const STATUS_PAGE_PATH: PathResource = {
  param: 'pageID',
  what: 'The status page',
  exists: async (reader, id, teamId) => {
    const doc = await reader.get(STATUS_PAGES_PROJECTION, STATUS_PAGES_COLLECTION, id);
    return doc !== null && (teamId === null || doc.team_id === teamId);
  },
};
