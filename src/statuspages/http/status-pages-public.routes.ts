import { Controller, Get, Param, Req, Res, UseGuards } from '@nestjs/common';
import { ApiOperation, ApiParam, ApiProduces, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Problems } from '../../platform/http/problem.js';
import { Public } from '../../platform/http/route-auth.js';
import { MAX_LISTED_INCIDENTS } from '../domain/public-status.js';
import { SLUG_PATTERN } from '../domain/status-page.js';
import { PublicStatusReads, type PageView, type Rendered, type RenderKind } from '../application/public-status.reads.js';
import { AddressRateLimitGuard } from './address-rate-limit.guard.js';
import { renderAtom, renderRss } from './render-feeds.js';
import { renderNotFoundHtml, renderStatusHtml } from './render-html.js';

/** Browsers and CDNs may keep a representation this long, then revalidate with If-None-Match. */
export const CACHE_CONTROL = 'public, max-age=10';

const JSON_TYPE = 'application/json; charset=utf-8';

const RENDERERS: Record<RenderKind, (view: PageView) => { body: string; contentType: string }> = {
  html: (view) => ({ body: renderStatusHtml(view), contentType: 'text/html; charset=utf-8' }),
  summary: ({ model }) => ({ body: JSON.stringify(model.summary), contentType: JSON_TYPE }),
  incidents: ({ model }) => ({ body: JSON.stringify({ page: model.summary.page, incidents: model.incidents.slice(0, MAX_LISTED_INCIDENTS) }), contentType: JSON_TYPE }),
  atom: ({ model }) => ({ body: renderAtom(model), contentType: 'application/atom+xml; charset=utf-8' }),
  rss: ({ model }) => ({ body: renderRss(model), contentType: 'application/rss+xml; charset=utf-8' }),
};

/** RFC 9110 If-None-Match: `*`, or a list of tags compared weakly. */
function notModified(header: string | string[] | undefined, etag: string): boolean {
  if (header === undefined) return false;
  const value = Array.isArray(header) ? header.join(',') : header;
  if (value.trim() === '*') return true;
  return value.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
}

/**
 * Sends the answer. Returns nothing: a Fastify reply is thenable (it settles once the response
 * is written), so returning it would keep the handler pending until a large body left the socket.
 */
function send(request: FastifyRequest, reply: FastifyReply, rendered: Rendered): void {
  reply.header('etag', rendered.etag).header('cache-control', CACHE_CONTROL);
  if (notModified(request.headers['if-none-match'], rendered.etag)) reply.code(304).send();
  else reply.code(200).type(rendered.contentType).send(rendered.body);
}

/**
 * Public status pages: no token, limited per client address. Served from the views and cached
 * while they are unchanged; each answer carries an ETag (304 on If-None-Match).
 */
@ApiTags('Status pages (public)')
@Controller('status/:slug')
@UseGuards(AddressRateLimitGuard)
export class StatusPagesPublicController {
  constructor(private readonly reads: PublicStatusReads) {}

  private async rendered(slug: string, kind: RenderKind, request: FastifyRequest): Promise<Rendered | null> {
    if (!SLUG_PATTERN.test(slug)) return null;
    return this.reads.render(slug, kind, RENDERERS[kind], request);
  }

  private async json(slug: string, kind: RenderKind, request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const rendered = await this.rendered(slug, kind, request);
    if (!rendered) throw Problems.notFound('The status page');
    send(request, reply, rendered);
  }

  @Public()
  @Get()
  @ApiOperation({ summary: 'The status page (HTML, works without JavaScript)' })
  @ApiParam({ name: 'slug' })
  @ApiProduces('text/html')
  @ApiResponse({ status: 200, description: 'The page; ETag, Cache-Control public.' })
  @ApiResponse({ status: 304, description: 'If-None-Match matched.' })
  @ApiResponse({ status: 404, description: 'No page has this slug (an HTML page).' })
  @ApiResponse({ status: 429, description: 'Too many requests from this address (Retry-After).' })
  async page(@Param('slug') slug: string, @Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    const rendered = await this.rendered(slug, 'html', request);
    if (!rendered) reply.code(404).type('text/html; charset=utf-8').send(renderNotFoundHtml());
    else send(request, reply, rendered);
  }

  @Public()
  @Get('summary.json')
  @ApiOperation({ summary: 'Atlassian Statuspage v2 summary' })
  @ApiParam({ name: 'slug' })
  @ApiResponse({ status: 200, description: 'page, status, components, unresolved incidents, scheduled_maintenances.' })
  @ApiResponse({ status: 404, description: 'No page has this slug (problem details).' })
  @ApiResponse({ status: 429, description: 'Too many requests from this address (Retry-After).' })
  summary(@Param('slug') slug: string, @Req() request: FastifyRequest, @Res() reply: FastifyReply) {
    return this.json(slug, 'summary', request, reply);
  }

  @Public()
  @Get('incidents.json')
  @ApiOperation({ summary: 'The 50 most recent incidents, Statuspage shape' })
  @ApiParam({ name: 'slug' })
  @ApiResponse({ status: 200, description: '{ page, incidents }, newest first.' })
  @ApiResponse({ status: 404, description: 'No page has this slug (problem details).' })
  incidents(@Param('slug') slug: string, @Req() request: FastifyRequest, @Res() reply: FastifyReply) {
    return this.json(slug, 'incidents', request, reply);
  }

  @Public()
  @Get('feed.atom')
  @ApiOperation({ summary: 'Atom feed: one entry per checkpoint, newest first, at most 50' })
  @ApiParam({ name: 'slug' })
  @ApiProduces('application/atom+xml')
  atom(@Param('slug') slug: string, @Req() request: FastifyRequest, @Res() reply: FastifyReply) {
    return this.json(slug, 'atom', request, reply);
  }

  @Public()
  @Get('feed.rss')
  @ApiOperation({ summary: 'RSS 2.0 feed: one entry per checkpoint, newest first, at most 50' })
  @ApiParam({ name: 'slug' })
  @ApiProduces('application/rss+xml')
  rss(@Param('slug') slug: string, @Req() request: FastifyRequest, @Res() reply: FastifyReply) {
    return this.json(slug, 'rss', request, reply);
  }
}
