import type { PathResource } from '../../platform/http/path-resources.js';

/** `:channelID`: a notification channel of the path's team. */
export const CHANNEL_PATH: PathResource = {
  param: 'channelID',
  what: 'The notification channel',
  exists: async (reader, id, teamId) => {
    const doc = await reader.get('notifications', 'channels', id);
    return doc !== null && (teamId === null || doc.team_id === teamId);
  },
};
