import { Feed } from 'feed';
import { feedEntries, MAX_FEED_ENTRIES, type StatusModel } from '../domain/public-status.js';
import { escapeHtml } from './render-html.js';

/**
 * One Atom/RSS entry per update of the page's visible incidents, and one per component down or
 * degraded that no published incident explains ("Outage detected at ..."), newest first, at most 50.
 */
function feedOf(model: StatusModel): Feed {
  const page = model.summary.page;
  const feed = new Feed({
    id: page.url,
    // "Acme" -> "Acme status"; "Acme Status" stays as it is (not "Acme Status status").
    title: /\bstatus$/i.test(page.name.trim()) ? page.name : `${page.name} status`,
    description: model.description || `Incident updates of ${page.name}`,
    link: page.url,
    updated: new Date(page.updated_at),
    generator: 'http-monitor',
    feedLinks: { atom: `${page.url}/feed.atom`, rss: `${page.url}/feed.rss` },
  });
  const headline = (notice: StatusModel['notices'][number]) =>
    notice.kind === 'recovered' ? 'recovered, monitoring' : notice.status === 'major_outage' ? 'outage detected' : 'degraded performance detected';
  const items: Array<Parameters<Feed['addItem']>[0]> = model.notices.map((notice) => ({
    title: escapeHtml(`${notice.component}: ${headline(notice)}`),
    id: `${page.url}#component-${notice.component_id}-${notice.kind}-${notice.since}`,
    guid: `${page.url}#component-${notice.component_id}-${notice.kind}-${notice.since}`,
    link: `${page.url}#component-${notice.component_id}`,
    date: new Date(notice.since),
    published: new Date(notice.since),
    description: escapeHtml(notice.text),
    content: `<p>${escapeHtml(notice.text)}</p>`,
  }));
  for (const { incident, update } of feedEntries(model)) {
    items.push({
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
  items.sort((a, b) => (b.published ?? b.date).getTime() - (a.published ?? a.date).getTime());
  for (const item of items.slice(0, MAX_FEED_ENTRIES)) feed.addItem(item);
  return feed;
}

export const renderAtom = (model: StatusModel) => feedOf(model).atom1();
export const renderRss = (model: StatusModel) => feedOf(model).rss2();
