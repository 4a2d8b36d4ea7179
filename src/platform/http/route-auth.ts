import { RouteConfig } from '@nestjs/platform-fastify';

import type { Role, Scope } from '../auth/scopes.js';
import type { AppConfig } from '../config/config.js';

export { SCOPES, type Role, type Scope } from '../auth/scopes.js';

/** Who a request acts as, set by the auth hook before the handler runs. */
export type Principal =
  | { kind: 'admin' }
  | { kind: 'token'; tokenId: number; teamId: number; scopes: Scope[]; role: Role };

export type RouteAuth =
  | { kind: 'public' }
  | { kind: 'admin' }
  | { kind: 'token'; scope: Scope; editor?: boolean };

export interface RouteOptions {
  auth: RouteAuth;
  /** Raised body limit (bytes) for this route; the default is 1 MiB. */
  bodyLimit?: number;
  /**
   * Fields of the response's `data` that are secrets shown once (an issued token, a channel's
   * signing secret): the stored Idempotency-Key response holds them as null, so a replay answers
   * the same resource with the secret null and no record at rest ever holds it.
   */
  secretFields?: string[];
  /**
   * Headers every answer of the route carries, the 401, 403 and 429 of the auth hook included
   * (set before any check): the deprecated v1 analytics route's Deprecation, Link and Sunset.
   */
  headers?: (config: AppConfig) => Record<string, string>;
}

/** A developer token as the auth hook needs it. */
export interface TokenRecord {
  tokenId: number;
  teamId: number;
  scopes: Scope[];
  role: Role;
  expiresAt: string | null;
  revokedAt: string | null;
}

/** Looks a presented token up by its SHA-256 hash (implemented by the tenancy context). */
export interface TokenVerifier {
  /** `scope` (the request): see `ReadStore.stamps`. */
  findByHash(hash: string, scope?: object): Promise<TokenRecord | null>;
  /** Records use, throttled by the implementation. */
  touched(tokenId: number, teamId: number): void;
}

export const TOKEN_VERIFIER = Symbol('TOKEN_VERIFIER');

export const Public = () => RouteConfig({ auth: { kind: 'public' } } satisfies RouteOptions);
export const AdminOnly = (options: Omit<RouteOptions, 'auth'> = {}) => RouteConfig({ auth: { kind: 'admin' }, ...options } satisfies RouteOptions);
export const RequiresScope = (scope: Scope, options: { editor?: boolean; headers?: RouteOptions['headers'] } = {}) =>
  RouteConfig({ auth: { kind: 'token', scope, editor: options.editor }, ...(options.headers ? { headers: options.headers } : {}) } satisfies RouteOptions);
