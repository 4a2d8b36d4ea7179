import { Module } from '@nestjs/common';
import { TOKEN_VERIFIER } from '../platform/http/route-auth.js';
import { CreateTeamHandler, IssueTokenHandler, RevokeTokenHandler } from './application/tenancy.commands.js';
import { TenancyReads } from './views/tenancy/queries.js';
import { ViewTokenVerifier } from './application/token-verifier.js';
import { TeamsController } from './http/teams.controller.js';

@Module({
  controllers: [TeamsController],
  providers: [CreateTeamHandler, IssueTokenHandler, RevokeTokenHandler, TenancyReads, { provide: TOKEN_VERIFIER, useClass: ViewTokenVerifier }],
  exports: [TOKEN_VERIFIER],
})
export class TenancyModule {}
