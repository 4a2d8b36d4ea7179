import type { FastifyInstance } from 'fastify';

/**
 * Remembers every registered route so a miss can tell "no such path" (404) from "path exists,
 * other method" (405 with Allow).
 */
export class RouteTable {
  private readonly routes: Array<{ method: string; pattern: RegExp }> = [];

  attach(fastify: FastifyInstance): void {
    fastify.addHook('onRoute', (route) => {
      const methods = Array.isArray(route.method) ? route.method : [route.method];
      const pattern = new RegExp(`^${route.url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:[A-Za-z0-9_]+/g, '[^/]+')}/?$`);
      for (const method of methods) this.routes.push({ method: method.toUpperCase(), pattern });
    });
  }

  allowedMethods(path: string): string[] {
    const methods = new Set(this.routes.filter((route) => route.pattern.test(path)).map((route) => route.method));
    return [...methods].sort();
  }
}
