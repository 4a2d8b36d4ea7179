import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { sendProblem } from '../../platform/http/http-conventions.js';
import { Problems } from '../../platform/http/problem.js';
import type { RouteOptions } from '../../platform/http/route-auth.js';
import { PLATFORM, type Platform } from '../../platform/platform.js';
import { MAX_LISTED_INCIDENTS } from '../domain/public-status.js';
import { SLUG_PATTERN } from '../domain/status-page.js';
import { PublicStatusReads, type PageView, type Rendered, type RenderKind } from '../application/public-status.js';
import { AddressRateLimit } from './address-rate-limit.js';
import { renderAtom, renderRss } from './render-feeds.js';
import { renderNotFoundHtml, renderStatusHtml } from './render-html.js';

/** Browsers and CDNs may keep a representation this long, then revalidate with If-None-Match. */
export const CACHE_CONTROL = 'public, max-age=10';

const JSON_TYPE = 'application/json; charset=utf-8';
const HTML_TYPE = 'text/html; charset=utf-8';

const RENDERERS: Record<RenderKind, (view: PageView) => { body: string; contentType: string }> = {
  html: (view) => ({ body: renderStatusHtml(view), contentType: HTML_TYPE }),
  summary: ({ model }) => ({ body: JSON.stringify(model.summary), contentType: JSON_TYPE }),
  incidents: ({ model }) => ({ body: JSON.stringify({ page: model.summary.page, incidents: model.incidents.slice(0, MAX_LISTED_INCIDENTS) }), contentType: JSON_TYPE }),
  atom: ({ model }) => ({ body: renderAtom(model), contentType: 'application/atom+xml; charset=utf-8' }),
  rss: ({ model }) => ({ body: renderRss(model), contentType: 'application/rss+xml; charset=utf-8' }),
};

/** Each public route: its path under `/status/:slug` and the representation it answers. */
const ROUTES: Array<{ path: string; kind: RenderKind }> = [
  { path: '', kind: 'html' },
  { path: '/summary.json', kind: 'summary' },
  { path: '/incidents.json', kind: 'incidents' },
  { path: '/feed.atom', kind: 'atom' },
  { path: '/feed.rss', kind: 'rss' },
];

/** RFC 9110 If-None-Match: `*`, or a list of tags compared weakly. */
function notModified(header: string | string[] | undefined, etag: string): boolean {
  if (header === undefined) return false;
  const value = Array.isArray(header) ? header.join(',') : header;
  if (value.trim() === '*') return true;
  return value.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
}

function send(request: FastifyRequest, reply: FastifyReply, rendered: Rendered): FastifyReply {
  reply.header('etag', rendered.etag).header('cache-control', CACHE_CONTROL);
  if (notModified(request.headers['if-none-match'], rendered.etag)) return reply.code(304).send();
  return reply.code(200).type(rendered.contentType).send(rendered.body);
}

/** An unknown slug: an HTML page for people on the page's own route, problem details elsewhere. */
function notFound(kind: RenderKind, reply: FastifyReply): FastifyReply {
  if (kind === 'html') return reply.code(404).type(HTML_TYPE).send(renderNotFoundHtml());
  return sendProblem(reply, Problems.notFound('The status page').problem);
}

/**
 * Public status pages: no token, limited per client address; each answer carries an ETag (304 on
 * If-None-Match). They answer cached bytes for most requests, so they are plain Fastify routes
 * (as `/metrics` is) rather than Nest controllers: the platform's conventions are Fastify hooks
 * and apply all the same (request id, public auth, metrics, request log, problem details for
 * anything thrown), without Nest's per-request guard, interceptor and parameter machinery.
 * Requests read in one turn of the event loop share one look at the views' stamps (the read
 * store's `stamps`, each request its own scope).
 */
@Injectable()
export class StatusPagesPublicRoutes implements OnModuleInit {
  private readonly limit: AddressRateLimit;

  constructor(
    @Inject(PLATFORM) platform: Platform,
    private readonly reads: PublicStatusReads,
    private readonly adapterHost: HttpAdapterHost,
  ) {
    this.limit = new AddressRateLimit(platform.coordination, platform.config.statusPageRateLimitPerMinute);
  }

  onModuleInit(): void {
    const fastify = this.adapterHost.httpAdapter.getInstance<FastifyInstance>();
    const config = { auth: { kind: 'public' } } satisfies RouteOptions;
    for (const { path, kind } of ROUTES) {
      fastify.get<{ Params: { slug: string } }>(`/status/:slug${path}`, { config }, (request, reply) => this.answer(kind, request, reply));
    }
  }

  private async answer(kind: RenderKind, request: FastifyRequest<{ Params: { slug: string } }>, reply: FastifyReply): Promise<FastifyReply> {
    const refused = await this.limit.refusal(request, reply);
    if (refused) return sendProblem(reply, refused);
    const slug = request.params.slug;
    const rendered = SLUG_PATTERN.test(slug) ? await this.reads.render(slug, kind, RENDERERS[kind], request) : null;
    return rendered ? send(request, reply, rendered) : notFound(kind, reply);
  }
}
