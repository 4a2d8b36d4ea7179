import { Inject, Injectable } from '@nestjs/common';
import type { Role, Scope, TokenRecord, TokenVerifier } from '../../platform/http/route-auth.js';
import { PLATFORM, type Platform } from '../../platform/platform.js';
import { TOKEN_USED, teamStream } from '../domain/team.js';

/** last_used_at is recorded at most this often per token and process, to keep the log lean. */
const TOUCH_INTERVAL_MS = 60_000;
/** Tokens remembered per process; beyond it the least recently stored is forgotten. */
const CACHED_TOKENS = 10_000;

interface CachedToken {
  /** Physical collection and its `changed` stamp when the record was read. */
  collection: string;
  changed: number;
  record: TokenRecord;
}

/**
 * Finds tokens in the tenancy view. A found record is kept and served again while the tokens
 * collection's stamp is unchanged; any write to it (issue, revoke, last use), from any process
 * sharing the store, moves the stamp, so a revocation takes effect on the next request.
 */
@Injectable()
export class ViewTokenVerifier implements TokenVerifier {
  private readonly lastTouched = new Map<number, number>();
  private readonly byHash = new Map<string, CachedToken>();

  constructor(@Inject(PLATFORM) private readonly platform: Platform) {}

  async findByHash(hash: string): Promise<TokenRecord | null> {
    const stamps = await this.platform.reader.stamps('tenancy', 'tokens');
    const cached = this.byHash.get(hash);
    if (cached && stamps && cached.collection === stamps.collection && cached.changed === stamps.changed) return cached.record;
    const record = await this.read(hash);
    if (record && stamps) this.remember(hash, { collection: stamps.collection, changed: stamps.changed, record });
    return record;
  }

  private async read(hash: string): Promise<TokenRecord | null> {
    const [token] = await this.platform.reader.find('tenancy', 'tokens', { filter: { token_hash: hash }, limit: 1 });
    if (!token) return null;
    return {
      tokenId: Number(token.token_id),
      teamId: Number(token.team_id),
      scopes: token.scopes as Scope[],
      role: token.role as Role,
      expiresAt: (token.expires_at as string | null) ?? null,
      revokedAt: (token.revoked_at as string | null) ?? null,
    };
  }

  private remember(hash: string, entry: CachedToken): void {
    this.byHash.delete(hash);
    if (this.byHash.size >= CACHED_TOKENS) this.byHash.delete(this.byHash.keys().next().value!);
    this.byHash.set(hash, entry);
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
