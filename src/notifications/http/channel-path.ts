import type { PathResource } from '../../platform/http/path-resources.js';
import { CHANNELS, NOTIFICATIONS_VIEW } from '../reactors/notifications/view.js';

/** `:channelID`: a notification channel of the path's team. */
export const CHANNEL_PATH: PathResource = {
  param: 'channelID',
  what: 'The notification channel',
  exists: async (reader, id, teamId) => {
    const doc = await reader.get(NOTIFICATIONS_VIEW, CHANNELS, id);
    return doc !== null && (teamId === null || doc.team_id === teamId);
  },
};
