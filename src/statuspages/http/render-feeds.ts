import { Feed } from 'feed';
import { feedEntries, type StatusModel } from '../domain/public-status.js';
import { escapeHtml } from './render-html.js';

/** One Atom/RSS entry per checkpoint of the page's visible incidents, newest first, at most 50. */
function feedOf(model: StatusModel): Feed {
  const page = model.summary.page;
  const feed = new Feed({
    id: page.url,
    title: `${page.name} status`,
    description: model.description || `Incident updates of ${page.name}`,
    link: page.url,
    updated: new Date(page.updated_at),
    generator: 'http-monitor',
    feedLinks: { atom: `${page.url}/feed.atom`, rss: `${page.url}/feed.rss` },
  });
  for (const { incident, update } of feedEntries(model)) {
    feed.addItem({
      // The feed marks titles and bodies as HTML: checkpoint text is plain, so it is escaped.
      title: escapeHtml(`${incident.name}: ${update.title}`),
      id: `${incident.shortlink}-update-${update.id}`,
      guid: `${incident.shortlink}-update-${update.id}`,
      link: incident.shortlink,
      date: new Date(update.updated_at),
      published: new Date(update.created_at),
      description: escapeHtml(update.body),
      content: `<p>${escapeHtml(update.body).replace(/\n/g, '<br>')}</p>`,
    });
  }
  return feed;
}

export const renderAtom = (model: StatusModel) => feedOf(model).atom1();
export const renderRss = (model: StatusModel) => feedOf(model).rss2();
