import 'reflect-metadata';
import { type DynamicModule, Module, type Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { CqrsModule } from '@nestjs/cqrs';
import { LogController } from 'fastify';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { HealthController } from '../platform/health/health.controller.js';
import { installHttpConventions, MAX_BODY_LIMIT } from '../platform/http/http-conventions.js';
import { clientErrorHandler, frameworkErrors } from '../platform/http/framework-errors.js';
import { ProblemFilter, ROUTE_TABLE } from '../platform/http/problem.filter.js';
import { lazyRequestLogger, logEachRequest } from '../platform/http/lazy-request-logger.js';
import { requestIdFor } from '../platform/http/request-id.js';
import { TOKEN_VERIFIER, type TokenVerifier } from '../platform/http/route-auth.js';
import { RouteTable } from '../platform/http/route-table.js';
import { installMetrics } from '../platform/metrics/metrics-http.js';
import type { Platform } from '../platform/platform.js';
import { PlatformModule } from '../platform/platform.module.js';
import { PinoNestLogger } from './nest-logger.js';
import { contextModules } from './contexts.js';

export const OPENAPI_PATH = 'api/public/v2/openapi.json';

function rootModule(platform: Platform, routes: RouteTable, contexts: Array<Type | DynamicModule>): DynamicModule {
  @Module({})
  class AppModule {}
  return {
    module: AppModule,
    imports: [CqrsModule.forRoot(), PlatformModule.forRoot(platform), ...contexts],
    controllers: [HealthController],
    providers: [{ provide: ROUTE_TABLE, useValue: routes }],
  };
}

function mountOpenApi(app: NestFastifyApplication): void {
  const config = new DocumentBuilder()
    .setTitle('Monitoring Service Developer API')
    .setVersion('2')
    .setDescription('Projects, endpoints, checks, alert status, analytics and incidents. Errors are RFC 9457 problem details.')
    .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'Developer token' })
    .build();
  const document = SwaggerModule.createDocument(app, config);
  document.paths = Object.fromEntries(Object.entries(document.paths).filter(([path]) => path.startsWith('/api/public/')));
  SwaggerModule.setup('docs', app, document, { jsonDocumentUrl: OPENAPI_PATH, yamlDocumentUrl: 'api/public/v2/openapi.yaml' });
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
    logger: platform.logger,
  });
  installMetrics(adapter.getInstance(), platform.metrics, { token: platform.config.metricsToken });
  const app = await NestFactory.create<NestFastifyApplication>(rootModule(platform, routes, contextModules(platform.config.role)), adapter, {
    bodyParser: false,
    logger: new PinoNestLogger(platform.logger),
  });
  app.useGlobalFilters(new ProblemFilter(platform, routes));
  tokens = app.get<TokenVerifier>(TOKEN_VERIFIER, { strict: false });
  if (['all', 'api'].includes(platform.config.role)) mountOpenApi(app);
  await app.init();
  return app;
}
