import { type PathResource, teamDocument } from '../../platform/http/path-resources.js';
import { STATUS_PAGES_COLLECTION, STATUS_PAGES_PROJECTION } from '../views/status-pages/view.js';

/** `:pageID` in application API paths: a status page of the path's team. */
export const STATUS_PAGE_PATH: PathResource = { param: 'pageID', what: 'The status page', exists: teamDocument(STATUS_PAGES_PROJECTION, STATUS_PAGES_COLLECTION) };
