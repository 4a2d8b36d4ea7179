import { Body, Controller, Delete, HttpCode, Param, Patch, Post, Req } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiBody, ApiOkResponse, ApiOperation, ApiProperty, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { Problems } from '../../platform/http/problem.js';
import { toTimestamp } from '../../platform/http/query.js';
import { createdAt } from '../../platform/http/http-conventions.js';
import { PathResources } from '../../platform/http/path-resources.js';
import { AdminOnly } from '../../platform/http/route-auth.js';
import { pathId, validateBody, validateBodyInSlices } from '../../platform/http/validation.js';
import { commandContext } from '../../tenancy/http/teams.controller.js';
import { TEAM_PATH } from '../../tenancy/http/team-path.js';
import {
  CancelMaintenanceWindow,
  CreateProject,
  DeleteEndpoint,
  DeleteProject,
  ImportChecks,
  RegisterEndpoint,
  ScheduleMaintenanceWindow,
  UpdateEndpoint,
  UpdateProject,
} from '../application/monitoring.commands.js';
import { MonitoringReads } from '../views/monitoring/queries.js';
import { ENDPOINT_PATH, PROJECT_PATH } from './monitoring-paths.js';
import { EndpointResponse, ProjectResponse } from './public.dto.js';
import { CreateEndpointBody, CreateMaintenanceWindowBody, CreateProjectBody, ImportChecksBody, UpdateEndpointBody, UpdateProjectBody } from './admin.dto.js';
import { DataResponse } from '../../platform/http/envelope.dto.js';

const IMPORT_BODY_LIMIT = 16 * 1024 * 1024;

function requireSomething(body: object): void {
  if (Object.keys(body).length === 0) throw Problems.validation([{ field: 'body', code: 'required', message: 'must change at least one field' }]);
}

/** Without undefined entries (class-transformer keeps declared-but-absent keys off; this is belt and braces). */
function defined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

class MaintenanceWindowDto {
  @ApiProperty({ type: 'integer', minimum: 1 }) id!: number;
  @ApiProperty({ type: 'integer', minimum: 1 }) team_id!: number;
  @ApiProperty({ type: 'integer', minimum: 1, nullable: true }) project_id!: number | null;
  @ApiProperty({ type: 'integer', minimum: 1, nullable: true }) endpoint_id!: number | null;
  @ApiProperty({ type: String, format: 'date-time' }) starts_at!: string;
  @ApiProperty({ type: String, format: 'date-time' }) ends_at!: string;
  @ApiProperty({ type: String, nullable: true }) reason!: string | null;
  @ApiProperty({ type: String, format: 'date-time' }) created_at!: string;
}

class MaintenanceWindowResponse extends DataResponse(MaintenanceWindowDto) {}

class ImportedCount {
  @ApiProperty({ type: 'integer', minimum: 1 }) imported!: number;
}

class ImportResponse extends DataResponse(ImportedCount) {}

/** Application API (admin token): projects, endpoints, maintenance windows, check import. */
@ApiTags('Monitoring')
@ApiBearerAuth()
@Controller('api/v2/teams/:teamID')
@PathResources(TEAM_PATH, PROJECT_PATH, ENDPOINT_PATH)
export class MonitoringAdminController {
  constructor(
    private readonly commands: CommandBus,
    private readonly reads: MonitoringReads,
  ) {}

  @AdminOnly()
  @Post('projects')
  @HttpCode(201)
  @ApiOperation({ summary: 'Create a project' })
  @ApiBody({ type: CreateProjectBody })
  @ApiResponse({ status: 201, type: ProjectResponse })
  async createProject(@Param('teamID') teamParam: string, @Body() body: unknown, @Req() request: FastifyRequest) {
    const teamId = pathId(teamParam, 'The team');
    const input = defined(validateBody(CreateProjectBody, body));
    const projectId = await this.commands.execute(new CreateProject(teamId, input, commandContext(request)));
    return { data: await this.reads.project(teamId, projectId) };
  }

  @AdminOnly()
  @Patch('projects/:projectID')
  @ApiOperation({ summary: 'Rename or describe a project', description: 'At least one field.' })
  @ApiBody({ type: UpdateProjectBody })
  @ApiOkResponse({ type: ProjectResponse })
  async updateProject(@Param('teamID') teamParam: string, @Param('projectID') projectParam: string, @Body() body: unknown, @Req() request: FastifyRequest) {
    const teamId = pathId(teamParam, 'The team');
    const projectId = pathId(projectParam, 'The project');
    const input = defined(validateBody(UpdateProjectBody, body));
    requireSomething(input);
    await this.commands.execute(new UpdateProject(teamId, projectId, input, commandContext(request)));
    return { data: await this.reads.project(teamId, projectId) };
  }

  @AdminOnly()
  @Delete('projects/:projectID')
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete a project without endpoints', description: 'A ProjectDeleted event; the project leaves lists and analytics.' })
  @ApiResponse({ status: 204, description: 'Deleted.' })
  @ApiResponse({ status: 409, description: 'project_not_empty: endpoints still belong to it.' })
  async deleteProject(@Param('teamID') teamParam: string, @Param('projectID') projectParam: string, @Req() request: FastifyRequest) {
    await this.commands.execute(new DeleteProject(pathId(teamParam, 'The team'), pathId(projectParam, 'The project'), commandContext(request)));
  }

  @AdminOnly()
  @Post('endpoints')
  @HttpCode(201)
  @ApiOperation({ summary: 'Register an endpoint', description: 'Disabled until its destination is verified.' })
  @ApiBody({ type: CreateEndpointBody })
  @ApiResponse({ status: 201, type: EndpointResponse })
  async createEndpoint(@Param('teamID') teamParam: string, @Body() body: unknown, @Req() request: FastifyRequest) {
    const teamId = pathId(teamParam, 'The team');
    const input = defined(validateBody(CreateEndpointBody, body));
    const endpointId = await this.commands.execute(new RegisterEndpoint(teamId, input, commandContext(request)));
    return { data: await this.reads.endpoint(teamId, endpointId) };
  }

  @AdminOnly()
  @Patch('endpoints/:endpointID')
  @ApiOperation({ summary: 'Change an endpoint', description: 'At least one field; configuration changes bump configuration_version.' })
  @ApiBody({ type: UpdateEndpointBody })
  @ApiOkResponse({ type: EndpointResponse })
  @ApiResponse({ status: 409, description: 'destination_not_verified: enabling before verification.' })
  async updateEndpoint(@Param('teamID') teamParam: string, @Param('endpointID') endpointParam: string, @Body() body: unknown, @Req() request: FastifyRequest) {
    const teamId = pathId(teamParam, 'The team');
    const endpointId = pathId(endpointParam, 'The endpoint');
    const input = defined(validateBody(UpdateEndpointBody, body));
    requireSomething(input);
    if (input.maintenance_until) input.maintenance_until = toTimestamp(input.maintenance_until);
    await this.commands.execute(new UpdateEndpoint(teamId, endpointId, input, commandContext(request)));
    return { data: await this.reads.endpoint(teamId, endpointId) };
  }

  @AdminOnly()
  @Delete('endpoints/:endpointID')
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete an endpoint', description: 'Probing stops at once; it leaves lists and analytics comparisons; its events and incidents stay.' })
  @ApiResponse({ status: 204, description: 'Deleted.' })
  async deleteEndpoint(@Param('teamID') teamParam: string, @Param('endpointID') endpointParam: string, @Req() request: FastifyRequest) {
    await this.commands.execute(new DeleteEndpoint(pathId(teamParam, 'The team'), pathId(endpointParam, 'The endpoint'), commandContext(request)));
  }

  @AdminOnly()
  @Post('maintenance-windows')
  @HttpCode(201)
  @ApiOperation({ summary: 'Schedule a maintenance window' })
  @ApiBody({ type: CreateMaintenanceWindowBody })
  @ApiResponse({ status: 201, type: MaintenanceWindowResponse })
  async createWindow(@Param('teamID') teamParam: string, @Body() body: unknown, @Req() request: FastifyRequest) {
    const teamId = pathId(teamParam, 'The team');
    const input = validateBody(CreateMaintenanceWindowBody, body);
    const windowId = await this.commands.execute(
      new ScheduleMaintenanceWindow(
        teamId,
        {
          project_id: input.project_id ?? null,
          endpoint_id: input.endpoint_id ?? null,
          starts_at: toTimestamp(input.starts_at),
          ends_at: toTimestamp(input.ends_at),
          reason: input.reason ?? null,
        },
        commandContext(request),
      ),
    );
    return { data: await this.reads.window(teamId, windowId) };
  }

  @AdminOnly()
  @Delete('maintenance-windows/:windowID')
  @HttpCode(204)
  @ApiOperation({ summary: 'Cancel a maintenance window', description: 'An unknown or already cancelled window is 404.' })
  @ApiResponse({ status: 204, description: 'Cancelled.' })
  async cancelWindow(@Param('teamID') teamParam: string, @Param('windowID') windowParam: string, @Req() request: FastifyRequest) {
    await this.commands.execute(new CancelMaintenanceWindow(pathId(teamParam, 'The team'), pathId(windowParam, 'The maintenance window'), commandContext(request)));
  }

  @AdminOnly({ bodyLimit: IMPORT_BODY_LIMIT })
  @Post('endpoints/:endpointID/checks/import')
  @HttpCode(201)
  @ApiOperation({ summary: 'Import check history', description: '1 to 10,000 checks, body up to 16 MiB.' })
  @ApiBody({ type: ImportChecksBody })
  @ApiResponse({ status: 201, type: ImportResponse })
  async importChecks(@Param('teamID') teamParam: string, @Param('endpointID') endpointParam: string, @Body() body: unknown, @Req() request: FastifyRequest) {
    const teamId = pathId(teamParam, 'The team');
    const endpointId = pathId(endpointParam, 'The endpoint');
    const input = await validateBodyInSlices(ImportChecksBody, body);
    const imported = await this.commands.execute(new ImportChecks(teamId, endpointId, input.checks, commandContext(request)));
    createdAt(request, `/api/public/v2/endpoints/${endpointId}/checks`);
    return { data: { imported } };
  }
}
