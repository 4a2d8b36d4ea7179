import { Inject, Injectable } from '@nestjs/common';
import type { TokenRecord, TokenVerifier } from '../../platform/http/route-auth.js';
import { PLATFORM, type Platform } from '../../platform/platform.js';
import { ViewCache } from '../../platform/projections/view-cache.js';
import { TOKEN_USED, teamStream } from '../domain/team.js';
import { TENANCY_VIEW, type TokenDoc, TOKENS } from '../views/tenancy/view.js';

/** last_used_at is recorded at most this often per token and process, to keep the log lean. */
const TOUCH_INTERVAL_MS = 60_000;

/**
 * Finds tokens in the tenancy view. A found record is kept and served again while the tokens
 * collection's stamp is unchanged; any write to it (issue, revoke, last use), from any process
 * sharing the store, moves the stamp, so a revocation takes effect on the next request.
 */
@Injectable()
export class ViewTokenVerifier implements TokenVerifier {
  private readonly lastTouched = new Map<number, number>();
  private readonly byHash: ViewCache<TokenRecord>;

  constructor(@Inject(PLATFORM) private readonly platform: Platform) {
    this.byHash = new ViewCache(platform.reader, TENANCY_VIEW, TOKENS);
  }

  findByHash(hash: string, scope?: object): Promise<TokenRecord | null> {
    return this.byHash.get(hash, () => this.read(hash), scope);
  }

  private async read(hash: string): Promise<TokenRecord | null> {
    const [token] = (await this.platform.reader.find(TENANCY_VIEW, TOKENS, { filter: { token_hash: hash }, limit: 1 })) as unknown as TokenDoc[];
    if (!token) return null;
    return {
      tokenId: Number(token.token_id),
      teamId: Number(token.team_id),
      scopes: token.scopes,
      role: token.role,
      expiresAt: token.expires_at ?? null,
      revokedAt: token.revoked_at ?? null,
    };
  }

  touched(tokenId: number, teamId: number): void {
    const now = Date.now();
    if (now - (this.lastTouched.get(tokenId) ?? 0) < TOUCH_INTERVAL_MS) return;
    this.lastTouched.set(tokenId, now);
    const event = { type: TOKEN_USED, data: { token_id: tokenId, team_id: teamId, at: new Date(now).toISOString() }, metadata: { actor: `token:${tokenId}` } };
    this.platform.events.append(teamStream(teamId), [event], { expectedRevision: 'any' }).catch((error) => {
      this.platform.logger.warn({ err: error, token_id: tokenId }, 'recording token use failed');
    });
  }
}
