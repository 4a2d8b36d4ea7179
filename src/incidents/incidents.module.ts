import { Module } from '@nestjs/common';
import {
  CreateIncidentHandler,
  UpdateIncidentDetailsHandler,
  UpdateIncidentStatusHandler,
} from './application/incident.commands.js';
import { MergeIncidentsHandler } from './application/merge.command.js';
import { noteCommandHandlers } from './application/notes.commands.js';
import { IncidentHistoryController } from './http/incident-history.controller.js';
import { IncidentsController } from './http/incidents.controller.js';

/** The incidents context's Nest wiring: controllers, command/query handlers, background workers. */
@Module({
  controllers: [IncidentsController, IncidentHistoryController],
  providers: [
    CreateIncidentHandler,
    UpdateIncidentDetailsHandler,
    UpdateIncidentStatusHandler,
    MergeIncidentsHandler,
    ...noteCommandHandlers,
  ],
})
export class IncidentsModule {}
