/**
 * The public status page as one server-rendered HTML document: no script, inline CSS with a
 * light and a dark scheme (`prefers-color-scheme`), readable from a phone to a desktop.
 * Accessibility: landmarks (banner, main, contentinfo), one h1 and a heading per section and
 * item, states written out in words (colour is never the only cue), and each uptime bar is an
 * image with a text alternative summarising it, each day carrying its own label.
 * Every value from the views passes through `escapeHtml`.
 */
import {
  COMPONENT_STATUS_LABELS,
  incidentAnchor,
  type SpIncident,
  type SpMaintenance,
  type StatusModel,
} from '../domain/public-status.js';
import type { PageView, UptimeDay } from '../application/public-status.js';

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

const e = escapeHtml;

function when(iso: string): string {
  return `<time datetime="${e(iso)}">${e(iso.slice(0, 16).replace('T', ' '))} UTC</time>`;
}

const capitalise = (text: string) => text.charAt(0).toUpperCase() + text.slice(1).replace(/_/g, ' ');

function dayClass(day: UptimeDay): string {
  if (day.uptime_percent === null) return 'd-none';
  if (day.uptime_percent >= 99.9) return 'd-ok';
  if (day.uptime_percent >= 99) return 'd-minor';
  if (day.uptime_percent >= 95) return 'd-major';
  return 'd-bad';
}

function uptimeBar(name: string, days: UptimeDay[]): string {
  const measured = days.filter((d) => d.uptime_percent !== null);
  const checks = measured.reduce((sum, d) => sum + d.checks, 0);
  const weighted = checks > 0 ? measured.reduce((sum, d) => sum + (d.uptime_percent ?? 0) * d.checks, 0) / checks : null;
  const worst = measured.reduce<UptimeDay | null>((w, d) => (w === null || (d.uptime_percent ?? 100) < (w.uptime_percent ?? 100) ? d : w), null);
  const overall = weighted === null ? 'no data' : `${weighted.toFixed(2)} % uptime`;
  const summary =
    `${name}: ${overall} over the last ${days.length} days` +
    (worst && worst.uptime_percent !== null && worst.uptime_percent < 100 ? `; lowest ${worst.uptime_percent} % on ${worst.date}` : '') +
    (measured.length < days.length ? `; ${days.length - measured.length} days without data` : '');
  const cells = days
    .map((d) => {
      const label = `${d.date}: ${d.uptime_percent === null ? 'no data' : `${d.uptime_percent} %`}`;
      return `<span class="day ${dayClass(d)}" title="${e(label)}"></span>`;
    })
    .join('');
  return `<figure class="uptime">
<div class="bar" role="img" aria-label="${e(summary)}">${cells}</div>
<figcaption><span>${days.length} days ago</span><span class="overall-uptime">${e(overall)}</span><span>Today</span></figcaption>
</figure>`;
}

function incidentArticle(incident: SpIncident, labels: Map<string, string>, headingLevel: 3): string {
  const affected = incident.components.map((c) => e(c.name)).join(', ');
  const updates = incident.incident_updates
    .map((u) => {
      const label = labels.get(u.id) || capitalise(u.status);
      const body = u.body === u.title ? '' : `<p class="body">${e(u.body)}</p>`;
      const title = u.title === label ? '' : ` <span class="update-title">${e(u.title)}</span>`;
      return `<li class="update"><p class="update-head"><strong class="label">${e(label)}</strong>${title}</p>${body}<p class="meta">${when(u.display_at)}</p></li>`;
    })
    .join('\n');
  return `<article class="incident impact-${incident.impact}" id="${incidentAnchor(Number(incident.id))}" aria-labelledby="${incidentAnchor(Number(incident.id))}-title">
<h${headingLevel} id="${incidentAnchor(Number(incident.id))}-title">${e(incident.name)}</h${headingLevel}>
<p class="meta"><span class="pill status-${incident.status}">${e(capitalise(incident.status))}</span> ${incident.impact === 'major' ? 'Major' : 'Minor'} impact${affected ? ` · Affects ${affected}` : ''} · Started ${when(incident.created_at)}${incident.resolved_at ? ` · Resolved ${when(incident.resolved_at)}` : ''}</p>
<ol class="updates" aria-label="Updates, newest first">
${updates}
</ol>
</article>`;
}

function maintenanceItem(m: SpMaintenance): string {
  const state = m.status === 'in_progress' ? 'In progress' : 'Scheduled';
  return `<li class="maintenance"><p><strong>${e(m.name)}</strong> <span class="pill status-maintenance">${state}</span></p>
<p class="meta">${when(m.scheduled_for)} to ${when(m.scheduled_until)}${m.components.length ? ` · ${m.components.map((c) => e(c.name)).join(', ')}` : ''}</p></li>`;
}

const CSS = `
:root{color-scheme:light dark;--bg:#f7f7f8;--fg:#1d1d1f;--muted:#5b5b66;--card:#fff;--line:#d9d9de;--ok:#1a7f37;--minor:#9a6700;--major:#bc4c00;--bad:#cf222e;--maint:#0969da;--none:#c8c8cf}
@media (prefers-color-scheme:dark){:root{--bg:#0d1117;--fg:#e6edf3;--muted:#9ea7b3;--card:#161b22;--line:#30363d;--ok:#3fb950;--minor:#d29922;--major:#db6d28;--bad:#f85149;--maint:#58a6ff;--none:#3a3f47}}
*{box-sizing:border-box}body{margin:0;background:var(--bg);color:var(--fg);font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
.wrap{max-width:56rem;margin:0 auto;padding:1rem}
.skip{position:absolute;left:-999px}.skip:focus{left:1rem;top:1rem;background:var(--card);padding:.5rem}
header h1{margin:.5rem 0 0;font-size:1.75rem}header p{margin:.25rem 0;color:var(--muted)}
section{margin:1.5rem 0}h2{font-size:1.2rem;margin:0 0 .5rem}h3{font-size:1.05rem;margin:0}
.overall{padding:1rem 1.25rem;border-radius:.5rem;font-weight:600;font-size:1.15rem;color:#fff;margin:0}
.indicator-none{background:var(--ok)}.indicator-minor{background:var(--minor)}.indicator-major{background:var(--major)}.indicator-critical{background:var(--bad)}
@media (prefers-color-scheme:dark){.overall{color:#0d1117}}
.card{background:var(--card);border:1px solid var(--line);border-radius:.5rem;padding:1rem;margin:0 0 .75rem}
ul.plain,ol.updates{list-style:none;padding:0;margin:0}
.component{display:block}.component-head{display:flex;justify-content:space-between;gap:1rem;flex-wrap:wrap;align-items:baseline}
.state{font-weight:600}.state-operational{color:var(--ok)}.state-degraded_performance,.state-partial_outage{color:var(--minor)}.state-major_outage{color:var(--bad)}.state-under_maintenance{color:var(--maint)}
.uptime{margin:.5rem 0 0}.bar{display:flex;gap:1px;height:2rem;align-items:stretch}.day{flex:1 1 0;min-width:1px;border-radius:1px}
.d-ok{background:var(--ok)}.d-minor{background:var(--minor)}.d-major{background:var(--major)}.d-bad{background:var(--bad)}.d-none{background:var(--none)}
figcaption{display:flex;justify-content:space-between;color:var(--muted);font-size:.8rem}
.meta{color:var(--muted);font-size:.875rem;margin:.25rem 0}.pill{display:inline-block;border:1px solid currentColor;border-radius:999px;padding:0 .5rem;font-size:.8rem;font-weight:600}
.status-resolved{color:var(--ok)}.status-investigating{color:var(--bad)}.status-identified{color:var(--major)}.status-monitoring{color:var(--minor)}.status-maintenance{color:var(--maint)}
.notice{margin:.25rem 0;font-weight:600}.notice-major_outage{color:var(--bad)}.notice-degraded_performance{color:var(--minor)}
.maintenance p{margin:.25rem 0}.incident{border-left:4px solid var(--minor)}.incident.impact-major{border-left-color:var(--bad)}
.update{border-top:1px solid var(--line);padding:.5rem 0}.update:first-child{border-top:0}.update-head,.body{margin:.25rem 0;white-space:pre-wrap;overflow-wrap:anywhere}
footer{color:var(--muted);font-size:.875rem;border-top:1px solid var(--line);margin-top:2rem;padding-top:1rem}
a{color:var(--maint)}
@media (max-width:30rem){.wrap{padding:.75rem}header h1{font-size:1.4rem}.bar{height:1.5rem}}
`;

export function renderStatusHtml(view: PageView): string {
  const { model } = view;
  const s = model.summary;
  const url = s.page.url;
  const active = s.incidents;
  const notices = new Map(model.notices.map((n) => [n.component_id, n]));
  const noticeOf = (id: string) => {
    const notice = notices.get(id);
    return notice ? `<p class="notice notice-${notice.status}" role="status">${e(notice.text)}</p>\n` : '';
  };
  const componentItems = s.components
    .map(
      (c) => `<li class="card component" id="component-${e(c.id)}">
<div class="component-head"><h3>${e(c.name)}</h3><span class="state state-${c.status}">${COMPONENT_STATUS_LABELS[c.status]}</span></div>
${noticeOf(c.id)}${uptimeBar(c.name, view.uptime.get(c.id) ?? [])}
</li>`,
    )
    .join('\n');
  const section = (id: string, title: string, body: string) => `<section aria-labelledby="${id}"><h2 id="${id}">${title}</h2>\n${body}\n</section>`;
  const incidents = (list: SpIncident[]) => list.map((i) => `<div class="card">${incidentArticle(i, model.labels, 3)}</div>`).join('\n');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>${e(s.page.name)} status</title>
<link rel="alternate" type="application/atom+xml" title="${e(s.page.name)} status (Atom)" href="${e(url)}/feed.atom">
<link rel="alternate" type="application/rss+xml" title="${e(s.page.name)} status (RSS)" href="${e(url)}/feed.rss">
<style>${CSS}</style>
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<div class="wrap">
<header>
<h1>${e(s.page.name)}</h1>
${model.description ? `<p>${e(model.description)}</p>` : ''}
</header>
<main id="main">
<section aria-labelledby="overall-title"><h2 id="overall-title" class="skip">Overall status</h2>
<p class="overall indicator-${s.status.indicator}">${e(s.status.description)}</p>
</section>
${active.length ? section('active-title', 'Active incidents', incidents(active)) : ''}
${s.scheduled_maintenances.length ? section('maintenance-title', 'Maintenance', `<div class="card"><ul class="plain">${s.scheduled_maintenances.map(maintenanceItem).join('\n')}</ul></div>`) : ''}
${section('components-title', 'Components', s.components.length ? `<ul class="plain">\n${componentItems}\n</ul>` : '<p>No components.</p>')}
${section('past-title', 'Past incidents (last 14 days)', model.pastIncidents.length ? incidents(model.pastIncidents) : '<p class="card">No incidents in the last 14 days.</p>')}
</main>
<footer>
<p>Updated ${when(s.page.updated_at)}. Subscribe: <a href="${e(url)}/feed.atom">Atom</a> · <a href="${e(url)}/feed.rss">RSS</a> · <a href="${e(url)}/summary.json">JSON</a></p>
</footer>
</div>
</body>
</html>
`;
}

/** The 404 page for an unknown slug. */
export function renderNotFoundHtml(): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="color-scheme" content="light dark"><title>Status page not found</title>
<style>${CSS}</style></head>
<body><div class="wrap"><main id="main"><h1>Status page not found</h1><p>No status page has this address.</p></main></div></body></html>
`;
}

export type { StatusModel };
