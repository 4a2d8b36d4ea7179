import type { FastifyInstance } from 'fastify';

/**
 * Remembers every registered route so a miss can tell "no such path" (404) from "path exists,
 * other method" (405 with Allow).
 */
export class RouteTable {
  private readonly routes: Array<{ method: string; url: string; pattern: RegExp }> = [];

  attach(fastify: FastifyInstance): void {
    fastify.addHook('onRoute', (route) => {
      const methods = Array.isArray(route.method) ? route.method : [route.method];
      // The path exactly as the router matches it: no optional trailing slash, or a GET of
      // `/projects/` would be told "405, allowed: GET".
      const pattern = new RegExp(`^${route.url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:[A-Za-z0-9_]+/g, '[^/]+')}$`);
      for (const method of methods) this.routes.push({ method: method.toUpperCase(), url: route.url, pattern });
    });
  }

  /** Every registered route, as declared (`/api/public/v2/incidents/:incidentID`). */
  list(): Array<{ method: string; url: string }> {
    return this.routes.map(({ method, url }) => ({ method, url }));
  }

  allowedMethods(path: string): string[] {
    const methods = new Set(this.routes.filter((route) => route.pattern.test(path)).map((route) => route.method));
    return [...methods].sort();
  }
}
