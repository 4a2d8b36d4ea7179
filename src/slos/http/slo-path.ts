import { type PathResource, teamDocument } from '../../platform/http/path-resources.js';
import { SLOS_COLLECTION, SLOS_PROJECTION } from '../views/slos/view.js';

/** `:sloID`: an SLO of the path's team (application API) or of the token's team (Developer API). */
export const SLO_PATH: PathResource = { param: 'sloID', what: 'The SLO', exists: teamDocument(SLOS_PROJECTION, SLOS_COLLECTION) };
