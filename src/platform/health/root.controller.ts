import { Controller, Get, Header, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Public } from '../http/route-auth.js';

/** Where a newcomer goes from `/`: the same list as a short page (browsers) or JSON (API clients). */
export const SERVICE_LINKS = {
  service: 'monitoring',
  description: 'HTTP monitoring: scheduled checks of HTTP endpoints, alert signals, incidents, analytics, notifications and status pages.',
  docs: '/docs',
  admin_docs: '/docs/admin',
  openapi: '/api/public/v2/openapi.json',
  admin_openapi: '/api/v2/openapi.json',
  health: { live: '/health/live', ready: '/health/ready' },
  developer_api: '/api/public/v2/',
  application_api: '/api/v2/',
} as const;

const PAGE = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Monitoring service</title></head>
<body>
<h1>Monitoring service</h1>
<p>${SERVICE_LINKS.description}</p>
<ul>
<li><a href="/docs">/docs</a>: the Developer API (team tokens, <code>/api/public/v2/</code>)</li>
<li><a href="/docs/admin">/docs/admin</a>: the application API for operators (the admin token, <code>/api/v2/</code>)</li>
<li><a href="/health/ready">/health/ready</a>: readiness (<a href="/health/live">/health/live</a>: liveness)</li>
</ul>
</body>
</html>
`;

@ApiExcludeController()
@Controller()
export class RootController {
  /** A browser (Accept naming text/html) gets the page; anything else the JSON. */
  @Public()
  @Get()
  @Header('cache-control', 'no-cache')
  @Header('vary', 'accept')
  root(@Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply) {
    if (/\btext\/html\b/.test(String(request.headers.accept ?? ''))) {
      reply.type('text/html; charset=utf-8');
      return PAGE;
    }
    return SERVICE_LINKS;
  }
}
