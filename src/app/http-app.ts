import 'reflect-metadata';
import { type DynamicModule, Module, type Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { CqrsModule } from '@nestjs/cqrs';
import { LogController } from 'fastify';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { HealthController } from '../platform/health/health.controller.js';
import { RootController } from '../platform/health/root.controller.js';
import { installHttpConventions, MAX_BODY_LIMIT } from '../platform/http/http-conventions.js';
import { DomainErrors } from '../platform/http/domain-errors.js';
import { clientErrorHandler, frameworkErrors } from '../platform/http/framework-errors.js';
import { completeDocument } from '../platform/http/openapi.js';
import { ProblemFilter, ROUTE_TABLE } from '../platform/http/problem.filter.js';
import { lazyRequestLogger, logEachRequest } from '../platform/http/lazy-request-logger.js';
import { requestIdFor } from '../platform/http/request-id.js';
import { TOKEN_VERIFIER, type TokenVerifier } from '../platform/http/route-auth.js';
import { RouteTable } from '../platform/http/route-table.js';
import { installMetrics } from '../platform/metrics/metrics-http.js';
import type { Platform } from '../platform/platform.js';
import { PlatformModule } from '../platform/platform.module.js';
import { PinoNestLogger } from './nest-logger.js';
import { contextModules, domainErrorMappings } from './contexts.js';

export const OPENAPI_PATH = 'api/public/v2/openapi.json';
export const ADMIN_OPENAPI_PATH = 'api/v2/openapi.json';

function rootModule(platform: Platform, routes: RouteTable, contexts: Array<Type | DynamicModule>): DynamicModule {
  @Module({})
  class AppModule {}
  return {
    module: AppModule,
    imports: [CqrsModule.forRoot(), PlatformModule.forRoot(platform), ...contexts],
    controllers: [HealthController, RootController],
    providers: [{ provide: ROUTE_TABLE, useValue: routes }],
  };
}

const PUBLIC_TAGS = [
  { name: 'Monitoring', description: 'Projects, endpoints and their checks (monitoring:read).' },
  { name: 'Alerting', description: 'The current alert state of an endpoint (monitoring:read).' },
  { name: 'Analytics', description: 'Uptime, latency and incident figures of a team, project or endpoint (analytics:read).' },
  { name: 'Incidents', description: 'Incidents, their statuses, comments, checkpoints and merges (incidents:read; writes incidents:write and an editor).' },
];

const ADMIN_TAGS = [
  { name: 'Teams', description: 'Teams and their developer tokens.' },
  { name: 'Monitoring', description: 'Projects, endpoints, maintenance windows and check import.' },
  { name: 'Probing', description: 'Destination verification and checks run now.' },
  { name: 'Auditing', description: "An incident's events and its state at a time." },
];

const CONVENTIONS =
  'Errors are RFC 9457 problem details (application/problem+json) with a stable `code` and the `request_id`. ' +
  'A path that exists answers other methods with 405 method_not_allowed and an Allow header. ' +
  'Order of checks: authentication, scope and role, rate limit, idempotency replay, the resources the path names (404), the body and query (400), then the command.';

/** The developer API at /docs (public routes only) and the application API at /docs/admin, each with its own document. */
function mountOpenApi(app: NestFastifyApplication): void {
  const documents = [
    {
      prefix: '/api/public/',
      page: 'docs',
      json: OPENAPI_PATH,
      yaml: 'api/public/v2/openapi.yaml',
      title: 'Monitoring Service Developer API',
      description: `Projects, endpoints, checks, alert status, analytics and incidents of the token's team. ${CONVENTIONS}`,
      bearer: 'A developer token (mon_pat_...), scoped to one team; issued by an operator.',
      options: { tokens: 'developer' as const, tags: PUBLIC_TAGS },
    },
    {
      prefix: '/api/v2/',
      page: 'docs/admin',
      json: ADMIN_OPENAPI_PATH,
      yaml: 'api/v2/openapi.yaml',
      title: 'Monitoring Service Application API',
      description: `Provisioning for operators: teams, tokens, projects, endpoints, maintenance windows, check import, auditing. ${CONVENTIONS}`,
      bearer: 'The admin token (ADMIN_TOKEN, or the one generated into DATA_DIR/admin-token).',
      options: { tokens: 'admin' as const, tags: ADMIN_TAGS },
    },
  ];
  for (const spec of documents) {
    const config = new DocumentBuilder()
      .setTitle(spec.title)
      .setVersion('2')
      .setDescription(spec.description)
      .addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'opaque token', description: spec.bearer })
      .build();
    const document = SwaggerModule.createDocument(app, config);
    document.paths = Object.fromEntries(Object.entries(document.paths).filter(([path]) => path.startsWith(spec.prefix)));
    completeDocument(document, { ...spec.options, servers: [{ url: '/', description: 'This service' }] });
    SwaggerModule.setup(spec.page, app, document, { jsonDocumentUrl: spec.json, yamlDocumentUrl: spec.yaml });
  }
}

/**
 * The Nest application on Fastify for this process's role. The HTTP conventions are Fastify
 * hooks installed before Nest registers its routes, so their order is exact (see http/).
 */
export async function createHttpApp(platform: Platform): Promise<NestFastifyApplication> {
  const adapter = new FastifyAdapter({
    loggerInstance: platform.logger,
    genReqId: requestIdFor,
    childLoggerFactory: lazyRequestLogger,
    bodyLimit: MAX_BODY_LIMIT,
    // A request without Host is refused by the HTTP conventions, as problem details.
    http: { requireHostHeader: false },
    frameworkErrors: frameworkErrors(platform.logger),
    clientErrorHandler: clientErrorHandler(platform.logger),
    logController: new LogController({
      requestIdLogLabel: 'request_id',
      // replaced by one line per request after the response (logEachRequest)
      disableRequestLogging: true,
    }),
  });
  const routes = new RouteTable();
  routes.attach(adapter.getInstance());
  logEachRequest(adapter.getInstance());
  let tokens: TokenVerifier | null = null;
  installHttpConventions(adapter.getInstance(), {
    adminToken: platform.adminToken,
    tokens: () => tokens!,
    coordination: platform.coordination,
    rateLimitPerMinute: platform.config.rateLimitPerMinute,
    idempotencyStaleMs: platform.config.idempotencyStaleSeconds * 1000,
    instanceId: platform.instanceId,
    logger: platform.logger,
    config: platform.config,
  });
  installMetrics(adapter.getInstance(), platform.metrics, { token: platform.config.metricsToken });
  const app = await NestFactory.create<NestFastifyApplication>(rootModule(platform, routes, contextModules()), adapter, {
    bodyParser: false,
    logger: new PinoNestLogger(platform.logger),
  });
  app.useGlobalFilters(new ProblemFilter(platform, routes, new DomainErrors(domainErrorMappings())));
  tokens = app.get<TokenVerifier>(TOKEN_VERIFIER, { strict: false });
  if (['all', 'api'].includes(platform.config.role)) mountOpenApi(app);
  await app.init();
  return app;
}
