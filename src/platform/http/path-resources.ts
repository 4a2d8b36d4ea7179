import { applyDecorators, type CanActivate, type ExecutionContext, Inject, Injectable, SetMetadata, UseGuards } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';
import { PLATFORM, type Platform } from '../platform.js';
import type { ViewReader } from '../projections/views.js';
import { Problems } from './problem.js';
import { pathId } from './validation.js';

/** A kind of resource a route path names, such as `:teamID` or `:endpointID`. */
export interface PathResource {
  /** The route parameter that carries its id. */
  param: string;
  /** Subject of the 404 detail, e.g. "The team". */
  what: string;
  /** True when this resource is the team that later path resources must belong to. */
  isTeam?: boolean;
  /** Whether the resource exists and, when `teamId` is given, belongs to that team. `scope`: the request (see `ReadStore.stamps`). */
  exists(reader: ViewReader, id: number, teamId: number | null, scope?: object): Promise<boolean>;
}

/**
 * `exists` of a resource kept as one document of a view (id = the path id) that carries its
 * `team_id`: the document is there and, when a team is given, belongs to it.
 */
export function teamDocument(view: string, collection: string): PathResource['exists'] {
  return async (reader, id, teamId) => {
    const doc = await reader.get(view, collection, id);
    return doc !== null && (teamId === null || doc.team_id === teamId);
  };
}

const PATH_RESOURCES = Symbol('PATH_RESOURCES');

/**
 * The "path resource (404)" step of the decided order of checks. It runs as a guard: after the
 * Fastify hooks (authentication, scope/role, idempotency replay) and before the handler, which
 * is where bodies and queries are validated. Resources are resolved in the order given; the ones
 * whose parameter the route does not have are skipped, so a controller can declare them once.
 */
@Injectable()
export class PathResourceGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    @Inject(PLATFORM) private readonly platform: Platform,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const resources = this.reflector.getAllAndOverride<PathResource[] | undefined>(PATH_RESOURCES, [context.getHandler(), context.getClass()]) ?? [];
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    const params = (request.params ?? {}) as Record<string, string | undefined>;
    let teamId = request.principal?.kind === 'token' ? request.principal.teamId : null;
    for (const resource of resources) {
      const raw = params[resource.param];
      if (raw === undefined) continue;
      const id = pathId(raw, resource.what);
      if (!(await resource.exists(this.platform.reader, id, teamId, request))) throw Problems.notFound(resource.what);
      if (resource.isTeam) teamId = id;
    }
    return true;
  }
}

/** Declares (on a controller or a route) the path resources to resolve before the handler runs. */
export const PathResources = (...resources: PathResource[]) => applyDecorators(SetMetadata(PATH_RESOURCES, resources), UseGuards(PathResourceGuard));
