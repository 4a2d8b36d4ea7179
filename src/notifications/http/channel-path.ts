import { type PathResource, teamDocument } from '../../platform/http/path-resources.js';
import { CHANNELS, NOTIFICATIONS_VIEW } from '../reactors/notifications/view.js';

/** `:channelID`: a notification channel of the path's team. */
export const CHANNEL_PATH: PathResource = { param: 'channelID', what: 'The notification channel', exists: teamDocument(NOTIFICATIONS_VIEW, CHANNELS) };
