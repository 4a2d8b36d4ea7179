import { Readable } from 'node:stream';
import { Controller, Get, Header, Inject, Param, Query, Res, StreamableFile } from '@nestjs/common';
import { ApiBearerAuth, ApiNotFoundResponse, ApiOkResponse, ApiOperation, ApiProduces, ApiProperty, ApiQuery, ApiSecurity, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { AdminOnly, Public } from '../../platform/http/route-auth.js';
import { PathResources } from '../../platform/http/path-resources.js';
import { Problems } from '../../platform/http/problem.js';
import { QueryReader } from '../../platform/http/query.js';
import { PLATFORM, type Platform } from '../../platform/platform.js';
import { TEAM_PATH } from '../../tenancy/http/team-path.js';
import { pathId } from '../../platform/http/validation.js';
import { verifyHistory } from '../application/verify.js';
import { exportHistory } from '../application/export.js';
import { auditSigner, type AuditSigner } from '../domain/signing.js';
import { DataResponse } from '../../platform/http/envelope.dto.js';

class BrokenStreamDto {
  @ApiProperty({ type: String, example: 'incident-42' }) stream!: string;
  @ApiProperty({ type: 'integer', minimum: 0, description: 'The first revision of the stream that does not verify.' }) revision!: number;
  @ApiProperty({ type: String, enum: ['missing', 'altered', 'reordered'] }) problem!: string;
}

class AuditVerificationDto {
  @ApiProperty({ type: Boolean, description: "Every chain of the team's streams holds." }) intact!: boolean;
  @ApiProperty({ type: 'integer', minimum: 0 }) streams_checked!: number;
  @ApiProperty({ type: 'integer', minimum: 0 }) events_checked!: number;
  @ApiProperty({ type: [BrokenStreamDto] }) broken!: BrokenStreamDto[];
}

class AuditVerificationResponse extends DataResponse(AuditVerificationDto) {}

const NDJSON = 'application/x-ndjson';
const PEM = 'application/x-pem-file';

/** The signer of AUDIT_SIGNING_KEY, made once per process; null when no key is configured. */
function signerOf(platform: Platform): AuditSigner | null {
  return platform.config.auditSigningKey ? auditSigner(platform.config.auditSigningKey) : null;
}

/** Application API for auditors (admin token): the team's hash chains walked now, and its signed export (docs/audit.md). */
@ApiTags('Auditing')
@ApiBearerAuth()
@Controller('api/v2/teams')
@PathResources(TEAM_PATH)
export class AuditController {
  private readonly signer: AuditSigner | null;

  constructor(@Inject(PLATFORM) private readonly platform: Platform) {
    this.signer = signerOf(platform);
  }

  @AdminOnly()
  @Get(':teamID/audit/verify')
  @ApiOperation({
    summary: "Verify the hash chains of the team's streams",
    description: 'Walks every stream holding an event of the team, as stored, and names the first revision of each broken one (docs/audit.md).',
  })
  @ApiOkResponse({ type: AuditVerificationResponse })
  async verify(@Param('teamID') team: string) {
    const report = await verifyHistory(this.platform.storedEvents, { teamId: pathId(team, 'The team') });
    return {
      data: {
        intact: report.intact,
        streams_checked: report.streams_checked,
        events_checked: report.events_checked,
        broken: report.broken.map(({ stream, revision, problem }) => ({ stream, revision, problem })),
      },
    };
  }

  @AdminOnly()
  @Get(':teamID/audit-export')
  @ApiOperation({
    summary: "Export the team's history, signed",
    description:
      "NDJSON, streamed: one line per event of the team's streams in log order `{stream, revision, position, type, occurred_at, recorded_at, actor, request_id, data, prev_hash, hash}`, " +
      'then one manifest line `{"manifest": {team_id, stream, from, to, events, streams, generated_at, key_id, signature}}`, signed with AUDIT_SIGNING_KEY (Ed25519) when one is configured. ' +
      "No secret leaves: notification channels' streams are left out (`withheld_streams`), and the values the API hides of an endpoint show as `[withheld]`, named by the line's `withheld` and listed in the manifest's `withheld_lines`. " +
      'Check it offline with `npm run history -- verify-export FILE --public-key PEM` or openssl (docs/audit.md).',
  })
  @ApiQuery({ name: 'from', required: false, type: String, format: 'date-time', description: 'Events recorded at or after this time.' })
  @ApiQuery({ name: 'to', required: false, type: String, format: 'date-time', description: 'Events recorded before this time.' })
  @ApiProduces(NDJSON)
  @ApiOkResponse({ description: 'The export, streamed.', content: { [NDJSON]: { schema: { type: 'string' } } } })
  async export(@Param('teamID') team: string, @Query() query: Record<string, unknown>, @Res({ passthrough: true }) reply: FastifyReply) {
    const teamId = pathId(team, 'The team');
    const q = new QueryReader(query);
    const from = q.timestamp('from');
    const to = q.timestamp('to');
    if (from !== undefined && to !== undefined && Date.parse(from) > Date.parse(to)) q.fail('to', 'invalid_value', 'must not be before from');
    q.done();
    const lines = exportHistory(this.platform.storedEvents, { teamId }, { from: from ?? null, to: to ?? null, signer: this.signer });
    // The first chunk is read before answering: a store that fails at once gets a problem answer, not a cut stream.
    const first = await lines.next();
    async function* all() {
      if (!first.done) yield first.value;
      yield* lines;
    }
    reply.header('cache-control', 'no-store');
    return new StreamableFile(Readable.from(all()), { type: `${NDJSON}; charset=utf-8`, disposition: `attachment; filename="team-${teamId}-audit.ndjson"` });
  }
}

/** The key auditors check exports with: public, like any public key. */
@ApiTags('Auditing')
@Controller('api/v2/audit')
export class AuditKeyController {
  private readonly signer: AuditSigner | null;

  constructor(@Inject(PLATFORM) platform: Platform) {
    this.signer = signerOf(platform);
  }

  @Public()
  @ApiSecurity({}) // OpenAPI's "no credentials needed"
  @Get('public-key')
  @Header('content-type', `${PEM}; charset=utf-8`)
  @ApiOperation({
    summary: 'The public key audit exports are signed with',
    description: 'PEM (SubjectPublicKeyInfo) of the Ed25519 key of AUDIT_SIGNING_KEY. `Audit-Key-Id` is the hex SHA-256 of its DER, the `key_id` of the exports it signs. No token needed.',
  })
  @ApiProduces(PEM)
  @ApiOkResponse({ description: 'The public key in PEM.', content: { [PEM]: { schema: { type: 'string' } } } })
  @ApiNotFoundResponse({ description: 'No AUDIT_SIGNING_KEY is configured: exports are unsigned.' })
  publicKey(@Res({ passthrough: true }) reply: FastifyReply): string {
    if (!this.signer) throw Problems.notFound('An audit signing key (AUDIT_SIGNING_KEY)');
    reply.header('audit-key-id', this.signer.keyId);
    return this.signer.publicKeyPem;
  }
}
